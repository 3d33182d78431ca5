/* global module */
/**
 * `ora` (the devkit's install-task spinner) is ESM-only, which jest's CommonJS loader cannot require
 * on Node 20. The schematic tests load that executor module but never run a task (the runner only
 * records them), so the spinner is never started; this stands in so the module loads.
 */
module.exports = function ora() {
  throw new Error('the package-install task does not run in schematic tests');
};
