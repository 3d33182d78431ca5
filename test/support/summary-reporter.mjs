/**
 * Ends the run with one plain `tests: N passed, N failed, N skipped` line that any CI can read.
 * Written at process exit so that it comes after jest's own summary.
 */
export default class SummaryReporter {
  onRunComplete(_contexts, results) {
    const { numPassedTests, numFailedTests, numPendingTests, numTodoTests, numRuntimeErrorTestSuites } = results;
    const line = `tests: ${numPassedTests} passed, ${numFailedTests + numRuntimeErrorTestSuites} failed, ${numPendingTests + numTodoTests} skipped\n`;
    process.once('exit', () => process.stdout.write(line));
  }
}
