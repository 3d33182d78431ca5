import type { Tree } from '@angular-devkit/schematics';
import { posix } from 'node:path';

const SKIPPED_DIRECTORIES = new Set(['node_modules', 'dist', 'coverage', '.git']);

/** TypeScript files under `directory` (relative paths, no leading slash), build output and dependencies skipped. */
export function typeScriptFilesUnder(tree: Tree, directory: string): string[] {
  const files: string[] = [];
  const walk = (path: string): void => {
    const entry = tree.getDir(path);
    for (const file of entry.subfiles) if (file.endsWith('.ts') && !file.endsWith('.d.ts')) files.push(posix.join(path, file).replace(/^\//, ''));
    for (const sub of entry.subdirs) if (!SKIPPED_DIRECTORIES.has(sub)) walk(posix.join(path, sub));
  };
  walk(posix.join('/', directory));
  return files.sort();
}

/**
 * The file a relative import points at, the way `nodenext` maps it back to source: `./app.module.js`
 * -> `app.module.ts`, `./app.module` -> `app.module.ts` or `app.module/index.ts`. Undefined for a
 * package or path-alias import, or when no such file exists.
 */
export function resolveRelativeImport(tree: Tree, fromFile: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const target = posix.join(posix.dirname(fromFile), specifier);
  const stem = target.replace(/\.(m|c)?js$/, '');
  const candidates = [`${stem}.ts`, `${stem}.mts`, `${stem}.cts`, `${target}/index.ts`];
  return candidates.find((candidate) => tree.exists(candidate));
}

/** `./hello/hello.rpc.js` (ESM) or `./hello/hello.rpc` (CommonJS): how `fromFile` imports the `.ts` file `toFile`. */
export function relativeImportPath(fromFile: string, toFile: string, isEsm: boolean): string {
  let path = posix.relative(posix.dirname(posix.join('/', fromFile)), posix.join('/', toFile)).replace(/\.ts$/, isEsm ? '.js' : '');
  if (!path.startsWith('.')) path = `./${path}`;
  return path;
}
