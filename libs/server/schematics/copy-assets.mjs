/**
 * The schematics' non-TypeScript files, next to the compiled factories in dist/schematics: the
 * collection, the option schemas, the file templates, and the package.json that marks the folder
 * CommonJS (the devkit engine require()s factories; the rest of the package is ESM).
 */
import { cpSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const source = dirname(fileURLToPath(import.meta.url));
const target = join(source, '../dist/schematics');
const isAsset = (path) => {
  const file = relative(source, path).split(sep).join('/');
  return file === '' || !/\.(ts|mjs)$/.test(file) || file.includes('/files/');
};
cpSync(source, target, { recursive: true, filter: (path) => isAsset(path) && !path.endsWith('tsconfig.json') });
