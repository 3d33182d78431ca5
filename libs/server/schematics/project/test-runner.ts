import type { PackageJson } from './nest-project';

export type TestRunner = 'vitest' | 'jest';

export interface TestRunnerChoice {
  readonly runner: TestRunner | undefined;
  /** Where the choice came from, for the report. */
  readonly because: string;
}

/**
 * The runner the app's own tests use, so the generated spec runs with `npm test`: the runner the
 * `test` script calls (`vitest run` in today's `nest new` template, `jest` in Nest 10/11 apps), else
 * the one in the dependencies.
 */
export function detectTestRunner(packageJson: PackageJson): TestRunnerChoice {
  const script = packageJson.scripts?.test ?? '';
  for (const runner of ['vitest', 'jest'] as const) {
    if (new RegExp(`\\b${runner}\\b`).test(script)) return { runner, because: `the "test" script runs ${runner}` };
  }
  const dependencies = { ...packageJson.dependencies, ...packageJson.devDependencies };
  for (const runner of ['vitest', 'jest'] as const) {
    if (dependencies[runner]) return { runner, because: `package.json depends on ${runner}` };
  }
  return { runner: undefined, because: 'package.json has neither vitest nor jest' };
}
