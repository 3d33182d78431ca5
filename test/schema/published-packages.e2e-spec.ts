/**
 * No schema library becomes a dependency of the server: its built code and typings (what users
 * install) import neither zod, Valibot, ArkType nor `@standard-schema/spec` (whose interfaces are
 * copied, so a consumer type-checking with `skipLibCheck: false` needs none of them), and its
 * package.json names none of them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const SERVER = resolve(import.meta.dirname, '../../libs/server');
const LIBRARIES = ['zod', 'valibot', 'arktype', '@valibot/to-json-schema', '@standard-schema/spec'];
const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|\bimport\s+)['"]([^'"]+)['"]/g;

describe('the published server package and schema libraries', () => {
  it('built code and typings import no schema library (npm test builds first)', () => {
    const files = readdirSync(join(SERVER, 'dist'), { recursive: true })
      .map(String)
      .filter((f) => /\.(js|cjs|d\.ts)$/.test(f) && !f.startsWith('schematics') && !f.startsWith('explorer'));
    expect(files.length).toBeGreaterThan(100);
    const offending: string[] = [];
    const seen = new Set<string>();
    for (const file of files) {
      for (const [, specifier] of readFileSync(join(SERVER, 'dist', file), 'utf8').matchAll(IMPORT)) {
        seen.add(specifier);
        if (LIBRARIES.some((library) => specifier === library || specifier.startsWith(`${library}/`))) offending.push(`${file}: ${specifier}`);
      }
    }
    // The scan sees imports at all (a regex that matched nothing would pass anything).
    expect(seen).toContain('@nestjs/common');
    expect(seen).toContain('class-validator');
    expect(offending).toEqual([]);
  });

  it('package.json depends on none of them', () => {
    const pkg = JSON.parse(readFileSync(join(SERVER, 'package.json'), 'utf8'));
    const named = Object.keys({ ...pkg.dependencies, ...pkg.peerDependencies, ...pkg.optionalDependencies });
    expect(named.filter((name) => LIBRARIES.includes(name))).toEqual([]);
  });
});
