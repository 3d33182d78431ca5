/**
 * The layering of docs/architecture.md, enforced: inside libs/server/src a folder imports only folders of a
 * lower layer (never a sibling of its own layer, never a higher one), so there is no import cycle
 * between folders and the code reads bottom up. The shared protocol package imports nothing, and
 * the client never imports the server. A new folder must be placed in `SERVER_LAYERS` first.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const serverSrc = join(root, 'libs/server/src');

/** Bottom up. Folders of one layer are independent of each other. `.` is the module's root files. */
const SERVER_LAYERS: readonly (readonly string[])[] = [
  ['errors', 'stream-stores'],
  ['options'],
  ['context'],
  ['decorators'],
  ['params'],
  ['schema'],
  ['redis', 'security'],
  ['throttling', 'caching'],
  ['registry'],
  ['pipeline'],
  ['http'],
  ['streaming'],
  ['durable'],
  ['method-tools'],
  ['openrpc', 'explorer', 'mcp', 'observability', 'toolset', 'platforms', 'testing', 'terminus'],
  ['.'],
];

const layerOf = new Map<string, number>(SERVER_LAYERS.flatMap((folders, rank) => folders.map((f) => [f, rank] as const)));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.spec.ts') && !f.endsWith('.d.ts'))
    .map((f) => join(dir, f));
}

function importsOf(file: string): string[] {
  const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  return info.importedFiles.map((i) => i.fileName);
}

/** The top folder of a file under libs/server/src (`.` for the root files). */
function folderOf(file: string): string {
  const parts = relative(serverSrc, file).split(/[\\/]/);
  return parts.length === 1 ? '.' : parts[0];
}

describe('layers of libs/server/src', () => {
  const files = sourceFiles(serverSrc);

  it('every folder has a place in the layer list', () => {
    const unplaced = [...new Set(files.map(folderOf))].filter((f) => !layerOf.has(f));
    expect(unplaced).toEqual([]);
  });

  it('a folder imports only folders of lower layers: no sibling, no upward import, so no cycle', () => {
    const violations: string[] = [];
    for (const file of files) {
      const from = folderOf(file);
      for (const specifier of importsOf(file)) {
        if (!specifier.startsWith('.')) continue;
        const to = folderOf(resolve(dirname(file), specifier));
        if (to === from) continue;
        const [a, b] = [layerOf.get(from), layerOf.get(to)];
        if (a === undefined || b === undefined || b >= a) violations.push(`${relative(root, file)} (${from}) imports ${specifier} (${to})`);
      }
    }
    expect(violations).toEqual([]);
  });

  it('only testing/ (the `./testing` subpath, a client for tests) imports @nest-jsonrpc/client: the module itself never needs it', () => {
    const importers = files.filter((file) => importsOf(file).some((s) => s.startsWith('@nest-jsonrpc/client')));
    expect([...new Set(importers.map(folderOf))]).toEqual(['testing']);
  });

  it('only the platform adapters (platforms/) import Fastify or Express: every route is written once against the port', () => {
    const platformPackage = /^(fastify|@fastify\/|express$|express\/|@nestjs\/platform-(fastify|express))/;
    const glue = files
      .filter((file) => folderOf(file) !== 'platforms')
      .flatMap((file) => importsOf(file).filter((s) => platformPackage.test(s)).map((s) => `${relative(root, file)} -> ${s}`));
    expect(glue).toEqual([]);
  });

  it('the server imports the protocol package, never a relative path into another package', () => {
    const outside = files.flatMap((file) =>
      importsOf(file)
        .filter((s) => s.startsWith('.') && !resolve(dirname(file), s).startsWith(serverSrc))
        .map((s) => `${relative(root, file)} -> ${s}`),
    );
    expect(outside).toEqual([]);
  });
});

describe('the protocol, client and codegen packages', () => {
  it('@nest-jsonrpc/protocol imports nothing outside itself: no Node built-ins, no packages', () => {
    const dir = join(root, 'libs/protocol/src');
    const external = sourceFiles(dir).flatMap((file) => importsOf(file).filter((s) => !s.startsWith('./')).map((s) => `${relative(root, file)} -> ${s}`));
    expect(external).toEqual([]);
  });

  it('@nest-jsonrpc/client imports the protocol package, never the server, and no Node built-in', () => {
    const dir = join(root, 'libs/client/src');
    const bad = sourceFiles(dir)
      .flatMap((file) =>
        importsOf(file)
          .filter((s) => s.startsWith('@nest-jsonrpc/server') || s.startsWith('node:') || (s.startsWith('.') && !resolve(dirname(file), s).startsWith(dir)))
          .map((s) => `${relative(root, file)} -> ${s}`),
      );
    expect(bad).toEqual([]);
  });

  it('@nest-jsonrpc/client reaches the code generator only through its ./codegen subpath, a re-export of @nest-jsonrpc/codegen', () => {
    const dir = join(root, 'libs/client/src');
    const importers = sourceFiles(dir).filter((file) => importsOf(file).some((s) => s.startsWith('@nest-jsonrpc/codegen')));
    expect(importers.map((file) => relative(root, file))).toEqual(['libs/client/src/codegen/index.ts']);
  });

  it('@nest-jsonrpc/codegen imports no other @nest-jsonrpc package: it writes code that imports the client', () => {
    const dir = join(root, 'libs/codegen/src');
    const bad = sourceFiles(dir).flatMap((file) =>
      importsOf(file)
        .filter((s) => s.startsWith('@nest-jsonrpc/') || (s.startsWith('.') && !resolve(dirname(file), s).startsWith(dir)))
        .map((s) => `${relative(root, file)} -> ${s}`),
    );
    expect(bad).toEqual([]);
  });
});
