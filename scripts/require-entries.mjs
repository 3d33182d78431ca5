// The CommonJS side of every library's package.json `exports`, written into its dist/ after
// `tsc -b` (the root `npm run build` runs it). The libraries are ES modules; a CommonJS app loads
// them with require(), which Node.js ^20.19 / ^22.12 / >= 24 does for ES modules without top-level
// await (require(esm)). For each export entry this writes, under dist/require/:
//   - the `require` target, a .cjs file that require()s the ES module entry, and, where the
//     running Node.js (or a module loader such as jest's) cannot, throws one error that names the
//     Node.js versions needed instead of ERR_REQUIRE_ESM from deep inside the loader;
//   - the `require` typings: the library's .d.ts files copied next to a package.json that says
//     "commonjs", so TypeScript reads them as CommonJS typings. `module: node16` cannot require an
//     ES module's typings; nodenext, node20 and bundler read either.
// Each entry of `exports` must spell out its `require` condition (readers see the whole map in
// package.json); this script checks that it points where the files are written.
//
//   node scripts/require-entries.mjs [libs/protocol libs/server ...]   (default: every libs/* workspace)
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const REQUIRE_DIR = 'dist/require';

/** The helper each entry calls when require() fails: one per package, the message built here once. */
const ESM_REQUIRED_SOURCE = `'use strict';
// Turns a failed require() of this package's ES modules into one error that says what to do.

/** Node.js versions whose require() loads ES modules (require(esm)). */
function nodeRequiresEsm(version) {
  const [major, minor] = version.replace(/^v/, '').split('.').map(Number);
  return major >= 23 || (major === 22 && minor >= 12) || (major === 20 && minor >= 19);
}

exports.explain = function explain(error, packageName, engines) {
  if (error === null || typeof error !== 'object' || error.code !== 'ERR_REQUIRE_ESM') return error;
  const version = typeof process === 'object' && process.versions && process.versions.node ? 'v' + process.versions.node : undefined;
  const message =
    version === undefined || !nodeRequiresEsm(version)
      ? packageName + ' is an ES module package. A CommonJS app loads it with require(), which needs Node.js ' + engines +
        (version ? ' (this is Node.js ' + version + ')' : '') + '. Upgrade Node.js, or load ' + packageName + ' with import().'
      : packageName + ' is an ES module package, and the module loader that called require() cannot load ES modules, although Node.js ' + version +
        ' can. jest loads ES modules through require() on Node.js >= 24.9 only: run the tests on Node.js >= 24.9.';
  return Object.assign(new Error(message), { code: 'ERR_REQUIRE_ESM' });
};
`;

function entrySource(packageName, engines, esmFile, helperFile) {
  return `'use strict';
// The CommonJS entry of ${packageName}: the ES module ${esmFile}, loaded by require().
try {
  module.exports = require(${JSON.stringify(esmFile)});
} catch (error) {
  throw require(${JSON.stringify(helperFile)}).explain(error, ${JSON.stringify(packageName)}, ${JSON.stringify(engines)});
}
`;
}

const relativeSpecifier = (from, to) => {
  const path = relative(dirname(from), to).split('\\').join('/');
  return path.startsWith('.') ? path : `./${path}`;
};

function typingsOf(dist) {
  return readdirSync(dist, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.d.ts'))
    .map((entry) => relative(dist, join(entry.parentPath, entry.name)))
    .filter((file) => file.split(/[\\/]/)[0] !== 'require');
}

export function writeRequireEntries(libDir) {
  const manifest = JSON.parse(readFileSync(join(libDir, 'package.json'), 'utf8'));
  const engines = manifest.engines?.node;
  if (!engines) throw new Error(`${manifest.name}: package.json has no engines.node`);
  const dist = join(libDir, 'dist');
  const out = join(libDir, REQUIRE_DIR);
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'package.json'), `${JSON.stringify({ type: 'commonjs' }, null, 2)}\n`);
  const helper = join(out, 'esm-required.cjs');
  writeFileSync(helper, ESM_REQUIRED_SOURCE);
  for (const file of typingsOf(dist)) {
    mkdirSync(dirname(join(out, file)), { recursive: true });
    copyFileSync(join(dist, file), join(out, file));
  }

  const problems = [];
  for (const [subpath, entry] of Object.entries(manifest.exports ?? {})) {
    if (typeof entry === 'string') continue;
    const expected = {
      types: entry.types?.replace(/^\.\/dist\//, `./${REQUIRE_DIR}/`),
      default: entry.import?.replace(/^\.\/dist\//, `./${REQUIRE_DIR}/`).replace(/\.js$/, '.cjs'),
    };
    const keys = Object.keys(entry);
    if (
      !entry.types?.startsWith('./dist/') ||
      !entry.import?.startsWith('./dist/') ||
      entry.default !== entry.import ||
      JSON.stringify(entry.require) !== JSON.stringify(expected) ||
      keys.join() !== 'require,types,import,default'
    ) {
      problems.push(
        `"${subpath}" must read { "require": ${JSON.stringify(expected)}, "types": "${entry.types}", "import": "${entry.import}", "default": "${entry.import}" } ` +
          '(require first: TypeScript takes the first condition that matches, and `types` matches every import)',
      );
      continue;
    }
    const target = join(libDir, expected.default);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, entrySource(manifest.name, engines, relativeSpecifier(target, join(libDir, entry.import)), relativeSpecifier(target, helper)));
  }
  if (problems.length > 0) throw new Error(`${manifest.name} package.json exports:\n  ${problems.join('\n  ')}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const requested = process.argv.slice(2);
  const libs = requested.length > 0 ? requested : JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')).workspaces.filter((w) => w.startsWith('libs/'));
  for (const lib of libs) writeRequireEntries(resolve(repoRoot, lib));
}
