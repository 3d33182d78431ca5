/**
 * One naming scheme for the packages' files (docs/architecture.md, "Decisions"): kebab-case after
 * what the file holds, without Nest's role suffixes (`.guard`, `.decorator`, `.module`…) — the
 * folder says the concern. Test files keep their `.spec.ts`, `.e2e-spec.ts`, `.property.spec.ts` and
 * `.spec-support.ts` endings; the demo app and the schematics' templates (a user's app) keep the Nest CLI's names.
 */
import { readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const SOURCE_DIRS = ['libs/protocol/src', 'libs/server/src', 'libs/server/explorer/src', 'libs/client/src', 'libs/codegen/src', 'libs/llm/src'];
const KEBAB = /^[a-z0-9]+(?:-[a-z0-9]+)*(?:\.(?:spec|e2e-spec|property\.spec|spec-support|d))?\.(?:ts|mts|mjs|css|html)$/;

describe('file names of the packages', () => {
  it('are kebab-case, with no role suffix', () => {
    const odd = SOURCE_DIRS.flatMap((dir) =>
      readdirSync(join(root, dir), { recursive: true })
        .map(String)
        .filter((f) => /\.[a-z]+$/.test(f) && !KEBAB.test(f.split(/[\\/]/).pop()!))
        .map((f) => relative(root, join(root, dir, f))),
    );
    expect(odd).toEqual([]);
  });
});
