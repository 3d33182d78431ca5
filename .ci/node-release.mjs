// Other Node releases for CI and tests, fetched from the npm registry only (the registry's
// `node-<platform>-<arch>@<major>` package is the official build, headers included) and cached
// under node_modules/.cache (never committed; a clean clone fetches each release once).
//
// Used by .ci/run (the Node 24 pass of the suite), by the schematics e2e test (nest-cli 12
// needs Node >= 22.22) and by the pack test (the packages on Node 24, and the one error a CommonJS
// app gets on a Node without require(esm), 20.18 and 22.11): one download per release, one cache.
//
//   node .ci/node-release.mjs home 24       prints the release's home (its bin/node inside); a
//                                           major (24) or a minor line (20.18) takes its latest
//   node .ci/node-release.mjs sqlite <node> makes node_modules/better-sqlite3 the release that
//                                           runs on <node> (see below); `sqlite` alone restores
//                                           the lockfile's one
//
// Why a second better-sqlite3: 12.x (the lockfile's, the newest that runs on Node 20) is a
// `node::ObjectWrap` addon, and Node 24.19+ aborts the process when the GC finalizes one of its
// statements (`Assertion failed: (env) != nullptr` in RemoveEnvironmentCleanupHook,
// nodejs/node#65446) whatever headers it is built against. 13.x is a Node-API addon with
// prebuilt binaries in the package and needs Node >= 22 (it crashes on 20). So Node >= 22 runs
// 13.x, as the README tells users to, and Node 20 keeps 12.x.
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readdirSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const quiet = { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' };
/** The better-sqlite3 that Node >= 22 runs (pinned: CI must not change under us). */
export const SQLITE_FOR_NODE_22 = '13.2.0';

function cacheOf(root) {
  const cache = join(root, 'node_modules/.cache/nest-jsonrpc-node');
  mkdirSync(cache, { recursive: true });
  return cache;
}

/** The home of Node `<release>` (`24`, `20.18`: the latest matching release on the registry), fetched once. */
export function nodeReleaseHome(root, release) {
  const cache = cacheOf(root);
  const home = join(cache, `node-${release}`);
  if (existsSync(join(home, 'bin/node'))) return home;
  const download = join(cache, `download-${process.pid}`);
  rmSync(download, { recursive: true, force: true });
  mkdirSync(download);
  try {
    execFileSync('npm', ['pack', `node-${process.platform}-${process.arch}@${release}`, '--pack-destination', download, '--loglevel=error'], { ...quiet, cwd: download });
    const [tarball] = readdirSync(download).filter((f) => f.endsWith('.tgz'));
    execFileSync('tar', ['xzf', tarball], { ...quiet, cwd: download });
    rmSync(home, { recursive: true, force: true });
    renameSync(join(download, 'package'), home);
  } finally {
    rmSync(download, { recursive: true, force: true });
  }
  return home;
}

/**
 * Points node_modules/better-sqlite3 at the release `node` can run: a symlink to a cached install
 * of SQLITE_FOR_NODE_22 for Node >= 22, the lockfile's package (parked meanwhile) otherwise.
 * Renames and symlinks only: node_modules may be hard-linked into other checkouts, whose files
 * must not change.
 */
export function useSqliteFor(root, node) {
  const installed = join(root, 'node_modules/better-sqlite3');
  const parked = join(cacheOf(root), 'better-sqlite3-lockfile');
  const linked = existsSync(installed) && lstatSync(installed).isSymbolicLink();
  if (linked) unlinkSync(installed);
  if (existsSync(parked) && !existsSync(installed)) renameSync(parked, installed);
  if (!node) return;
  const major = Number(execFileSync(node, ['-p', 'process.versions.node.split(".")[0]'], quiet).trim());
  if (major < 22) return;
  const prefix = join(cacheOf(root), `better-sqlite3-${SQLITE_FOR_NODE_22}`);
  const target = join(prefix, 'node_modules/better-sqlite3');
  if (!existsSync(join(target, 'package.json'))) {
    mkdirSync(prefix, { recursive: true });
    writeFileSync(join(prefix, 'package.json'), '{"private":true}\n');
    execFileSync('npm', ['install', '--no-save', '--no-audit', '--no-fund', '--loglevel=error', `better-sqlite3@${SQLITE_FOR_NODE_22}`], {
      ...quiet,
      cwd: prefix,
      env: { ...process.env, PATH: `${dirname(node)}:${process.env.PATH}` },
    });
  }
  renameSync(installed, parked);
  symlinkSync(target, installed, 'dir');
  execFileSync(node, ['-e', "new (require('better-sqlite3'))(':memory:').close()"], { ...quiet, cwd: root });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [command, argument] = process.argv.slice(2);
  if (command === 'home') console.log(nodeReleaseHome(repoRoot, argument ?? '24'));
  else if (command === 'sqlite') useSqliteFor(repoRoot, argument);
  else {
    console.error('usage: node .ci/node-release.mjs home <major> | sqlite [<node binary>]');
    process.exit(2);
  }
}
