/**
 * The builds of the A/B mode (`npm run bench -- --ab <refA> <refB>`): the module as it was at a
 * git commit, built outside the repository, so that the same bench app can be run against two
 * builds in one run.
 *
 * A commit is exported with `git archive` into `<tmp>/nest-jsonrpc-bench-ab/<sha>` (BENCH_AB_DIR
 * overrides the parent folder), gets a `node_modules` of symlinks to this repository's own
 * (except `@nest-jsonrpc/*`, which point at the export's own libs), and its server library is
 * built with that commit's tsconfigs (`tsc -b libs/server`, which builds what it references).
 * Commits never change, so the build is kept and reused by later runs. `.` (or `worktree`) is the
 * working tree as it is, built by `npm run bench` itself.
 *
 * The bench apps are today's (bench/apps), compiled against each build's declarations: a build
 * whose public API does not fit them is measured with that commit's own bench/apps file instead,
 * and the run says so.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const tsc = join(repo, 'node_modules', 'typescript', 'bin', 'tsc');
const WORKING_TREE = new Set(['.', 'worktree']);

function git(...args) {
  return execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8' }).trim();
}

/** Runs tsc; returns its output when it fails, `undefined` when it succeeds. */
function runTsc(args) {
  try {
    execFileSync(process.execPath, [tsc, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    return undefined;
  } catch (error) {
    return `${error.stdout ?? ''}${error.stderr ?? ''}`.trim() || error.message;
  }
}

/**
 * `node_modules` for an exported commit: a symlink to each of the repository's packages, so
 * every import (the export's libs, the bench app, the packages themselves) resolves to the same
 * files as in the repository, and one Nest runs per process. The workspace packages point at the
 * export's libs instead.
 */
function linkNodeModules(dir) {
  const target = join(dir, 'node_modules');
  mkdirSync(join(target, '@nest-jsonrpc'), { recursive: true });
  for (const entry of readdirSync(join(repo, 'node_modules'))) {
    if (entry === '@nest-jsonrpc' || entry.startsWith('.package-lock')) continue;
    symlinkSync(join(repo, 'node_modules', entry), join(target, entry));
  }
  for (const folder of ['libs', 'apps']) {
    if (!existsSync(join(dir, folder))) continue;
    for (const lib of readdirSync(join(dir, folder))) {
      const manifest = join(dir, folder, lib, 'package.json');
      if (!existsSync(manifest)) continue;
      const { name } = JSON.parse(readFileSync(manifest, 'utf8'));
      // Relative, so the link survives the rename of the finished build into place.
      if (name?.startsWith('@nest-jsonrpc/')) symlinkSync(relative(dirname(join(target, name)), join(dir, folder, lib)), join(target, name));
    }
  }
}

/** Exports and builds one commit (once: a finished build is reused). */
function buildCommit(sha, root) {
  const dir = join(root, sha);
  if (existsSync(join(dir, '.bench-ab-built'))) return dir;
  const work = `${dir}.tmp-${process.pid}`;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  console.error(`  A/B: exporting ${sha.slice(0, 12)} to ${dir} and building its libs (once per commit)`);
  execFileSync('sh', ['-c', 'git -C "$1" archive --format=tar "$2" | tar -x -C "$3"', 'sh', repo, sha, work]);
  linkNodeModules(work);
  const failed = runTsc(['-b', join(work, 'libs', 'server')]);
  if (failed) {
    rmSync(work, { recursive: true, force: true });
    throw new Error(`A/B: ${sha.slice(0, 12)}: tsc -b libs/server failed with this repository's node_modules:\n${failed}`);
  }
  writeFileSync(join(work, '.bench-ab-built'), `${sha}\n`);
  rmSync(dir, { recursive: true, force: true });
  try {
    renameSync(work, dir);
  } catch (error) {
    // Another run finished the same build first: use that one.
    rmSync(work, { recursive: true, force: true });
    if (!existsSync(join(dir, '.bench-ab-built'))) throw error;
  }
  return dir;
}

/** Compiled apps of this run, removed when it exits (a build folder may serve several runs at once). */
const compiled = [];
process.once('exit', () => compiled.forEach((out) => rmSync(out, { recursive: true, force: true })));

/**
 * Compiles the bench app `name` (a file of bench/apps) against the build in `dir`, into
 * `<dir>/.bench-ab/<source>-<pid>/`; `source` is `today` (this repository's bench/apps) or `own`
 * (the commit's). Returns the compiled file, or tsc's output as `error`.
 */
function compileApp(dir, name, source) {
  const out = join(dir, '.bench-ab', `${source}-${process.pid}`);
  compiled.push(out);
  rmSync(out, { recursive: true, force: true });
  const apps = source === 'today' ? join(repo, 'bench', 'apps') : join(dir, 'bench', 'apps');
  if (!existsSync(join(apps, name))) return { error: `${source === 'today' ? 'bench/apps' : 'the commit'} has no ${name}` };
  cpSync(apps, join(out, 'apps'), { recursive: true });
  writeFileSync(
    join(out, 'tsconfig.json'),
    JSON.stringify({
      extends: join(repo, 'tsconfig.base.json'),
      compilerOptions: { rootDir: 'apps', outDir: 'dist', declaration: false, sourceMap: false },
      files: [join('apps', name)],
    }),
  );
  const error = runTsc(['-p', join(out, 'tsconfig.json')]);
  return error ? { error } : { file: join(out, 'dist', name.replace(/\.ts$/, '.js')) };
}

/**
 * Resolves and builds `ref` (a commit-ish, or `.` for the working tree) and compiles `apps` (file
 * names in bench/apps) against it. Returns `{ label, description, sha, dir, apps: { [name]:
 * compiled file }, ownApps, notes }`: `ownApps` names the apps for which the commit's own file stood in for
 * today's, `notes` says why.
 */
export function prepareBuild(ref, appNames) {
  if (WORKING_TREE.has(ref)) {
    const apps = {};
    for (const name of appNames) {
      apps[name] = join(repo, 'bench', 'dist', name.replace(/\.ts$/, '.js'));
      if (!existsSync(apps[name]) || !existsSync(join(repo, 'libs', 'server', 'dist', 'index.js'))) {
        throw new Error(`A/B: the working tree is not built (${apps[name]}): run it as \`npm run bench -- --ab ...\`, which builds first`);
      }
    }
    const head = git('rev-parse', '--short=9', 'HEAD');
    const dirty = git('status', '--porcelain', '--untracked-files=no') !== '';
    const description = `the working tree (${head}${dirty ? ' with uncommitted changes' : ''})`;
    return { label: 'working tree', description, sha: undefined, dir: repo, apps, ownApps: [], notes: [] };
  }
  let sha;
  try {
    sha = git('rev-parse', '--verify', '--quiet', `${ref}^{commit}`);
  } catch {
    throw new Error(`A/B: "${ref}" is not a commit of this repository (nor "." for the working tree)`);
  }
  const root = process.env.BENCH_AB_DIR ?? join(tmpdir(), 'nest-jsonrpc-bench-ab');
  const dir = buildCommit(sha, root);
  const apps = {};
  const ownApps = [];
  const notes = [];
  for (const name of appNames) {
    const today = compileApp(dir, name, 'today');
    if (today.file) {
      apps[name] = today.file;
      continue;
    }
    const own = compileApp(dir, name, 'own');
    if (!own.file) {
      throw new Error(`A/B: ${ref}: bench/apps/${name} compiles neither from today's bench apps:\n${today.error}\nnor from the commit's own:\n${own.error}`);
    }
    apps[name] = own.file;
    ownApps.push(name);
    notes.push(`${ref} (${sha.slice(0, 12)}): today's bench/apps/${name} does not compile against this build, so the commit's own bench/apps/${name} is measured:\n${today.error}`);
  }
  const short = git('rev-parse', '--short=9', sha);
  const subject = git('log', '-1', '--format=%s', sha);
  const label = sha.startsWith(ref) ? ref : `${ref} (${short})`;
  return { label, description: `${sha.slice(0, 12)} "${subject.length > 60 ? `${subject.slice(0, 57)}...` : subject}"`, sha, dir, apps, ownApps, notes };
}
