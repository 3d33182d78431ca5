import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GENERATED_OPTIONS_TABLES, withOptionsTables } from './options-readme.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');

describe('the generated options tables of the documentation', () => {
  for (const file of new Set(GENERATED_OPTIONS_TABLES.map((t) => t.file))) {
    it(`${file}: its tables are the ones the option tables write (run \`npm run docs:options\` after changing an option)`, () => {
      const text = readFileSync(resolve(ROOT, file), 'utf8');
      expect(text).toBe(withOptionsTables(file, text));
    });
  }

  it('links in a table under docs/ are relative to it', () => {
    const mcp = withOptionsTables('docs/mcp.md', readFileSync(resolve(ROOT, 'docs/mcp.md'), 'utf8'));
    expect(mcp).toContain('| `mcp.enabled` | `false` | chosen methods as MCP tools on Streamable HTTP ([docs/mcp.md](#options-mcp)) |');
    expect(mcp).not.toContain('](docs/');
  });
});
