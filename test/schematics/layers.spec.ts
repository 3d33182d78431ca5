/**
 * The schematics' folders import bottom up only (report -> typescript -> project -> the two
 * schematics), and the schematics import nothing from the module's runtime code: they run under the
 * Nest CLI, before the app is even built, and are compiled to CommonJS on their own.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const schematics = join(resolve(dirname(fileURLToPath(import.meta.url)), '../..'), 'libs/server/schematics');
const LAYERS: readonly (readonly string[])[] = [['report'], ['typescript'], ['project'], ['nest-add', 'rpc']];
const rankOf = new Map(LAYERS.flatMap((folders, rank) => folders.map((folder) => [folder, rank] as const)));

const sources = readdirSync(schematics, { recursive: true })
  .map(String)
  .filter((file) => file.endsWith('.ts') && !file.includes('/files/'));

describe('schematics layering', () => {
  it('every source file sits in a known folder', () => {
    expect(sources.filter((file) => !rankOf.has(file.split('/')[0]))).toEqual([]);
  });

  it.each(sources)('%s imports only lower folders and no runtime code', (file) => {
    const folder = file.split('/')[0];
    const imports = ts.preProcessFile(readFileSync(join(schematics, file), 'utf8')).importedFiles.map((i) => i.fileName);
    for (const specifier of imports.filter((s) => s.startsWith('.'))) {
      const target = relative(schematics, join(schematics, dirname(file), specifier));
      expect(target.startsWith('..')).toBe(false);
      const targetFolder = target.split('/')[0];
      if (targetFolder !== folder) expect([file, specifier, rankOf.get(targetFolder)! < rankOf.get(folder)!]).toEqual([file, specifier, true]);
    }
    expect(imports.filter((s) => s.startsWith('@nest-jsonrpc/'))).toEqual([]);
  });
});
