/* global module */
/**
 * jest transform for CommonJS packages that require Nest 12 (ESM only): see
 * nest-esm-for-cjs.setup.ts. Rewrites `require("@nestjs/common"|"@nestjs/core")` to the ESM
 * module instances that setup file published.
 */
module.exports = {
  process(source) {
    return {
      code: source.replace(/require\("(@nestjs\/(?:common|core))"\)/g, 'globalThis.__nestEsmForCjs["$1"]'),
    };
  },
};
