// Rewrites the generated options tables of the documentation (README.md, docs/mcp.md) from the option
// tables of libs/server/src/options (built: run through `npm run docs:options`).
// libs/server/src/options/options-readme.spec.ts fails while one is stale.
import { readFileSync, writeFileSync } from 'node:fs';
import { GENERATED_OPTIONS_TABLES, withOptionsTables } from '../libs/server/dist/options/options-readme.js';

for (const file of new Set(GENERATED_OPTIONS_TABLES.map((t) => t.file))) {
  const url = new URL(`../${file}`, import.meta.url);
  const before = readFileSync(url, 'utf8');
  const after = withOptionsTables(file, before);
  if (after === before) console.log(`${file}: its options tables are up to date`);
  else {
    writeFileSync(url, after);
    console.log(`${file}: options tables rewritten`);
  }
}
