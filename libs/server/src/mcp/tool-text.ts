/**
 * The text block of an MCP tool result (docs/mcp.md, "What a call answers"): how a result is rendered
 * in each format, how an RPC error reads for a text-only LLM client, and which format a call gets.
 * Pure functions: no Nest, no Fastify, no I/O. `toon` is `@toon-format/toon`'s encoder as is.
 */
import type { RpcErrorObject } from '@nest-jsonrpc/protocol';
import { encode as encodeToon } from '@toon-format/toon';
import { formatRpcErrorText } from '../errors/rpc-error-text.js';
// The one list of formats (and its type, `McpFormatName`): the options and the decorator check against it too.
import { MCP_FORMAT_NAMES, type McpFormatName } from '../options/mcp-options.js';

const FORMAT_SET: ReadonlySet<unknown> = new Set(MCP_FORMAT_NAMES);

export function isMcpFormatName(value: unknown): value is McpFormatName {
  return FORMAT_SET.has(value);
}

/** The text for a null or undefined result in `markdown` and `plain`. */
export const NO_RESULT_TEXT = '(no result)';

/** A markdown table holds at most this many rows and columns; anything larger is pretty JSON. */
export const MARKDOWN_TABLE_MAX_ROWS = 25;
export const MARKDOWN_TABLE_MAX_COLUMNS = 6;

/**
 * `value` as the text of a tool result.
 * - `json`: compact `JSON.stringify` (`null` for undefined, as `/rpc` answers a void handler).
 * - `pretty_json`: `JSON.stringify(value, null, 2)`.
 * - `markdown`: a list of 1–25 flat objects (string, number, boolean or null values) sharing the
 *   same 1–6 keys is a table, and the table is the whole text (`|` escaped, line breaks as `<br>`,
 *   null as an empty cell); null/undefined is `(no result)`; anything else is pretty JSON.
 * - `plain`: a string as is (unquoted); null/undefined is `(no result)`, so a text-only reader sees
 *   words rather than the JSON literal; anything else is compact JSON.
 * - `toon`: what `@toon-format/toon`'s `encode` prints.
 */
export function renderToolText(value: unknown, format: McpFormatName): string {
  switch (format) {
    case 'json':
      return JSON.stringify(value) ?? 'null';
    case 'pretty_json':
      return JSON.stringify(value, null, 2) ?? 'null';
    case 'markdown':
      if (value === null || value === undefined) return NO_RESULT_TEXT;
      return markdownTable(value) ?? JSON.stringify(value, null, 2) ?? 'null';
    case 'plain':
      if (value === null || value === undefined) return NO_RESULT_TEXT;
      return typeof value === 'string' ? value : (JSON.stringify(value) ?? 'null');
    case 'toon':
      return encodeToon(value);
  }
}

type Scalar = string | number | boolean | null;

function isScalar(value: unknown): value is Scalar {
  return value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
}

/** The table for a list of flat objects with one key set, or undefined when `value` is not one. */
function markdownTable(value: unknown): string | undefined {
  if (!Array.isArray(value) || value.length < 1 || value.length > MARKDOWN_TABLE_MAX_ROWS) return undefined;
  const first: unknown = value[0];
  if (typeof first !== 'object' || first === null || Array.isArray(first)) return undefined;
  const keys = Object.keys(first);
  if (keys.length < 1 || keys.length > MARKDOWN_TABLE_MAX_COLUMNS) return undefined;
  const rows: Scalar[][] = [];
  for (const item of value as unknown[]) {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) return undefined;
    const record = item as Record<string, unknown>;
    const own = Object.keys(record);
    if (own.length !== keys.length || !keys.every((k) => Object.prototype.hasOwnProperty.call(record, k))) return undefined;
    const cells = keys.map((k) => record[k]);
    if (!cells.every(isScalar)) return undefined;
    rows.push(cells);
  }
  const line = (cells: readonly string[]): string => `| ${cells.join(' | ')} |`;
  return [
    line(keys.map(markdownCell)),
    line(keys.map(() => '---')),
    ...rows.map((cells) => line(cells.map((c) => (c === null ? '' : markdownCell(String(c)))))),
  ].join('\n');
}

/** A cell on one line: `|` escaped, each line break (`\r\n`, `\n` or `\r`) as `<br>`. */
function markdownCell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\r\n|\r|\n/g, '<br>');
}

export { WHOLE_PARAMS_PATH } from '../errors/rpc-error-text.js';

/** The text of an RPC error in a tool result: `formatRpcErrorText`, the one rendering. */
export function renderToolErrorText(error: RpcErrorObject): string {
  return formatRpcErrorText(error);
}

/** How much of a refused value the message repeats (a header can be kilobytes long). */
const MAX_ECHOED_FORMAT_LENGTH = 64;

/** The message of the 400 -32600 answered for an unknown format. */
export function unknownFormatMessage(value: string): string {
  const shown = value.length > MAX_ECHOED_FORMAT_LENGTH ? `${value.slice(0, MAX_ECHOED_FORMAT_LENGTH)}…` : value;
  return `Unknown format ${JSON.stringify(shown)}; allowed formats: ${MCP_FORMAT_NAMES.join(', ')}`;
}

/**
 * The format of one call: the `X-Mcp-Format` header, then `?format=`, then `@RpcMcp({ format })`,
 * then `mcp.defaultFormat` (`fallback`). The first source that is given decides; an empty header
 * or query value counts as not given. A given value that is not a format is `{ invalid }` (the
 * caller answers 400 -32600 with `unknownFormatMessage(invalid)`), never a silent fallback.
 */
export function chooseToolTextFormat(sources: {
  header?: string;
  query?: string;
  decorator?: McpFormatName;
  fallback: McpFormatName;
}): { format: McpFormatName } | { invalid: string } {
  for (const given of [sources.header, sources.query]) {
    if (given === undefined || given === '') continue;
    return isMcpFormatName(given) ? { format: given } : { invalid: given };
  }
  return { format: sources.decorator ?? sources.fallback };
}
