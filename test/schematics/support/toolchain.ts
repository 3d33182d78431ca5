import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { run } from './processes.js';

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
  readonly nodeVersion: string;
}

export async function prepareToolchain(root: string): Promise<Toolchain> {
  const cache = join(root, 'node_modules/.cache/nest-jsonrpc-cli-e2e');
  const nodeHome = join(cache, 'node-24');
  const cliHome = join(cache, 'nest-cli-12');
  mkdirSync(cache, { recursive: true });

  if (!existsSync(join(nodeHome, 'bin/node'))) {
    const download = join(cache, 'download');
    rmSync(download, { recursive: true, force: true });
    mkdirSync(download);
    const nodePackage = `node-${process.platform}-${process.arch}@24`;
    await run('npm', ['pack', nodePackage, '--pack-destination', download, '--loglevel=error'], { cwd: download });
    const [tarball] = readdirSync(download).filter((f) => f.endsWith('.tgz'));
    await run('tar', ['xzf', tarball], { cwd: download });
    rmSync(nodeHome, { recursive: true, force: true });
    renameSync(join(download, 'package'), nodeHome);
    rmSync(download, { recursive: true, force: true });
  }

  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: [join(nodeHome, 'bin'), process.env.PATH].join(delimiter),
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
    // Reuse what npm has cached instead of revalidating every package (the packages are the same).
    npm_config_prefer_offline: 'true',
    // Colours and spinners off: the output is read by the test.
    NO_COLOR: '1',
    FORCE_COLOR: '0',
  };
  delete env.NODE_OPTIONS;
  const { output: nodeVersion } = await run('node', ['--version'], { cwd: cache, env });

  if (!existsSync(join(cliHome, 'node_modules/.bin/nest'))) {
    mkdirSync(cliHome, { recursive: true });
    await run('npm', ['install', '--prefix', cliHome, '--no-save', '--loglevel=error', '@nestjs/cli@12'], { cwd: cliHome, env });
  }
  return { env, nest: join(cliHome, 'node_modules/.bin/nest'), nodeVersion: nodeVersion.trim() };
}
