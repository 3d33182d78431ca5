import { mkdirSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { transformFileSync } from '@swc/core';

const root = join(dirname(fileURLToPath(import.meta.url)), '../../..');

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return tsFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.spec.ts') ? [path] : [];
  });
}

/**
 * Compiles the server sources and a child app (`entry`, relative to the repository root) into
 * `outDir` with swc (as jest does), so a test can run the app in a real, killable process without
 * a prior build. `node_modules` is linked in. Returns the compiled entry.
 */
export function compileChildApp(outDir: string, entry = 'test/durable/support/child-app.ts'): string {
  const sources = [...tsFiles(join(root, 'libs/server/src')), join(root, entry)];
  for (const file of sources) {
    const { code } = transformFileSync(file, {
      jsc: {
        target: 'es2022',
        parser: { syntax: 'typescript', decorators: true },
        transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
        keepClassNames: true,
      },
      module: { type: 'es6' },
    });
    const out = join(outDir, relative(root, file)).replace(/\.ts$/, '.js');
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, code);
  }
  writeFileSync(join(outDir, 'package.json'), '{"type":"module"}');
  symlinkSync(join(root, 'node_modules'), join(outDir, 'node_modules'), 'dir');
  return join(outDir, entry.replace(/\.ts$/, '.js'));
}
