import { mcpAuthOptionRows } from './mcp-auth-options.js';
import { mcpOptionRows } from './mcp-options.js';
import type { OptionRow } from './option-section.js';
import { optionRows } from './resolve-options.js';

/**
 * The generated options tables of the documentation, each between two marker lines in its file;
 * `npm run docs:options` (scripts/docs-options.mjs) rewrites what is between them, and
 * options-readme.spec.ts fails while one is stale. Every row comes from the option tables in
 * libs/server/src/options: an option is described once.
 */
export interface GeneratedOptionsTable {
  /** The file, from the repository's root. */
  readonly file: string;
  /** What the markers name (`options table`, `mcp options table`). */
  readonly what: string;
  readonly rows: () => OptionRow[];
}

export const GENERATED_OPTIONS_TABLES: readonly GeneratedOptionsTable[] = [
  { file: 'README.md', what: 'options table', rows: optionRows },
  { file: 'docs/mcp.md', what: 'mcp options table', rows: mcpOptionRows },
  { file: 'docs/mcp.md', what: 'mcp.auth options table', rows: mcpAuthOptionRows },
];

const startMarker = (what: string) => `<!-- ${what}: written by \`npm run docs:options\` from the tables in libs/server/src/options -->`;
const endMarker = (what: string) => `<!-- end of the ${what} -->`;

/** A row's links are written from the repository's root; in a file under docs/ they are made relative to it. */
function relativeLinks(doc: string, file: string): string {
  if (!file.includes('/')) return doc;
  return doc.replace(/\]\(([^)#][^)]*)\)/g, (whole, target: string) => {
    if (/^[a-z]+:/i.test(target)) return whole;
    if (target.startsWith(`${file}#`)) return `](${target.slice(file.length)})`;
    return target.startsWith('docs/') ? `](${target.slice('docs/'.length)})` : `](../${target})`;
  });
}

/** One table, one row per option. */
export function optionsTable(table: GeneratedOptionsTable): string {
  const rows = table.rows().map((row) => `| \`${row.option}\` | ${row.shown} | ${relativeLinks(row.doc, table.file)} |`);
  return ['| option | default | meaning |', '|---|---|---|', ...rows].join('\n');
}

/** `text` (the contents of `file`) with each of its generated tables replaced by the current one. */
export function withOptionsTables(file: string, text: string): string {
  for (const table of GENERATED_OPTIONS_TABLES.filter((t) => t.file === file)) {
    const start = startMarker(table.what);
    const end = endMarker(table.what);
    const from = text.indexOf(start);
    const to = text.indexOf(end);
    if (from < 0 || to < from) throw new Error(`${file} has no "${start}" ... "${end}" markers`);
    text = `${text.slice(0, from + start.length)}\n${optionsTable(table)}\n${text.slice(to)}`;
  }
  return text;
}
