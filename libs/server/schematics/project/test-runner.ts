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

/** The first jest that loads ES modules into CommonJS tests (require(esm)), and the Node.js it needs for that. */
const JEST_WITH_REQUIRE_ESM = { major: 30, minor: 4 };
const NODE_FOR_JEST_REQUIRE_ESM = { major: 24, minor: 9 };

export interface JestSetting {
  /** The jest version installed in the app (node_modules/jest), when there is one. */
  readonly installedJest: string | undefined;
  /** The Node.js running the schematic, the one the app's tests are likely run with. */
  readonly nodeVersion: string;
}

/**
 * In a CommonJS app, jest runs the tests as CommonJS and loads Nest 12 and this package, which are
 * ES modules, through its own require(esm): jest >= 30.4, with `--experimental-vm-modules` (the
 * CJS template's test scripts pass it), on Node.js >= 24.9. Says what is missing, or undefined
 * when nothing is (or the app is ESM, or does not test with jest).
 */
export function jestRequireEsmNote(packageJson: PackageJson, isEsm: boolean, setting: JestSetting, ownPackage: string): string | undefined {
  if (isEsm || detectTestRunner(packageJson).runner !== 'jest') return undefined;
  const missing: string[] = [];
  const declared = packageJson.devDependencies?.jest ?? packageJson.dependencies?.jest;
  if (setting.installedJest !== undefined ? !atLeast(setting.installedJest, JEST_WITH_REQUIRE_ESM) : declared !== undefined && !rangeAllows(declared, JEST_WITH_REQUIRE_ESM)) {
    missing.push(`${setting.installedJest !== undefined ? `jest ${setting.installedJest} is installed` : `package.json has jest@${declared}`}: upgrade it to ^30.4.0`);
  }
  const script = packageJson.scripts?.test ?? '';
  if (/\bjest\b/.test(script) && !script.includes('--experimental-vm-modules')) {
    missing.push('the "test" script runs jest without --experimental-vm-modules: run it as `node --experimental-vm-modules node_modules/jest/bin/jest.js`');
  }
  if (!atLeast(setting.nodeVersion, NODE_FOR_JEST_REQUIRE_ESM)) missing.push(`this is Node.js v${setting.nodeVersion.replace(/^v/, '')}: run the tests on Node.js >= 24.9`);
  if (missing.length === 0) return undefined;
  return (
    `jest loads ES modules (Nest 12's packages and ${ownPackage}) into this CommonJS app's tests through require(esm), ` +
    `which takes jest >= 30.4 with --experimental-vm-modules, on Node.js >= 24.9; ${missing.join('; ')}. ` +
    'On Node.js 20 and 22, jest cannot load Nest 12 into CommonJS tests at all; the build and `npm start` work on every supported Node.js.'
  );
}

type MajorMinor = { major: number; minor: number };

function majorMinor(version: string): MajorMinor | undefined {
  const [, major, minor] = /(\d+)(?:\.(\d+))?/.exec(version) ?? [];
  return major === undefined ? undefined : { major: Number(major), minor: Number(minor ?? 0) };
}

/** Whether a version (`30.5.2`, `v24.9.0`) is at least `minimum` (major.minor). */
function atLeast(version: string, minimum: MajorMinor): boolean {
  const v = majorMinor(version);
  return v === undefined || v.major > minimum.major || (v.major === minimum.major && v.minor >= minimum.minor);
}

/** Whether a declared range (`^30.0.0`, `~30.1.0`, `29.7.0`) lets npm install `minimum` or later. */
function rangeAllows(range: string, minimum: MajorMinor): boolean {
  const v = majorMinor(range);
  if (v === undefined) return true;
  return v.major > minimum.major || (v.major === minimum.major && (range.trim().startsWith('^') || v.minor >= minimum.minor));
}
