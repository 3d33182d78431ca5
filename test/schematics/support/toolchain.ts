import { existsSync, mkdirSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { nodeReleaseHome } from '../../../.ci/node-release.mjs';
import { run } from '../../support/processes.js';

/**
 * What a new user runs today, fetched from the npm registry only and cached between runs under
 * node_modules/.cache (never committed; a clean clone fetches it once):
 * - Node 24 LTS, from the registry's `node-<platform>-<arch>@24` package, because @nestjs/cli 12
 *   needs Node >= 22.22 and the suite itself runs on Node 20;
 * - @nestjs/cli 12, installed with that Node.
 */
export interface Toolchain {
  /** Environment for child processes: Node 24 first on PATH, npm quiet. */
  readonly env: NodeJS.ProcessEnv;
  /** The `nest` binary of the cached @nestjs/cli. */
  readonly nest: string;
  /** The devkit's `schematics` binary that @nestjs/cli runs its schematics with (`nest new` runs `application`). */
  readonly schematics: string;
  readonly nodeVersion: string;
}

export async function prepareToolchain(root: string): Promise<Toolchain> {
  const cache = join(root, 'node_modules/.cache/nest-jsonrpc-cli-e2e');
  const cliHome = join(cache, 'nest-cli-12');
  mkdirSync(cache, { recursive: true });
  // The same cached Node 24 as .ci/run's second pass of the suite.
  const nodeHome = nodeReleaseHome(root, 24);

  const env = toolEnv(nodeHome);
  const { output: nodeVersion } = await run('node', ['--version'], { cwd: cache, env });

  if (!existsSync(join(cliHome, 'node_modules/.bin/nest'))) {
    mkdirSync(cliHome, { recursive: true });
    await run('npm', ['install', '--prefix', cliHome, '--no-save', '--loglevel=error', '@nestjs/cli@12'], { cwd: cliHome, env });
  }
  return { env, nest: join(cliHome, 'node_modules/.bin/nest'), schematics: join(cliHome, 'node_modules/.bin/schematics'), nodeVersion: nodeVersion.trim() };
}

/**
 * The environment for a tool run by the Node of `nodeHome` (first on PATH): npm quiet and reusing
 * its cache, colours and spinners off (the output is read by a test), no NODE_OPTIONS of jest's.
 */
export function toolEnv(nodeHome: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: [join(nodeHome, 'bin'), process.env.PATH].join(delimiter),
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
    // Reuse what npm has cached instead of revalidating every package (the packages are the same).
    npm_config_prefer_offline: 'true',
    NO_COLOR: '1',
    FORCE_COLOR: '0',
  };
  delete env.NODE_OPTIONS;
  return env;
}
