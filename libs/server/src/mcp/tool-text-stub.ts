/**
 * TEMPORARY stand-in for `tool-text.ts` (written on the `mcp-text` branch), with its API: deleted
 * when that file lands. Only `json`, `pretty_json` and `plain` are rendered here.
 */
export type McpTextFormat = 'json' | 'pretty_json' | 'markdown' | 'plain' | 'toon';
export const MCP_TEXT_FORMATS: readonly McpTextFormat[] = Object.freeze(['json', 'pretty_json', 'markdown', 'plain', 'toon']);

export function isMcpTextFormat(value: unknown): value is McpTextFormat {
  return typeof value === 'string' && (MCP_TEXT_FORMATS as readonly string[]).includes(value);
}

export function renderToolText(value: unknown, format: McpTextFormat): string {
  if (format === 'plain' && typeof value === 'string') return value;
  return (format === 'pretty_json' ? JSON.stringify(value, null, 2) : JSON.stringify(value)) ?? 'null';
}

export function renderToolErrorText(error: { code: number; message: string; data?: unknown }): string {
  const lines = [`Error ${error.code}: ${error.message}`];
  if (error.code === -32602 && Array.isArray(error.data)) {
    for (const v of error.data as Array<{ path?: unknown; message?: unknown }>) lines.push(`  - ${String(v.path)}: ${String(v.message)}`);
  }
  return lines.join('\n');
}

export function chooseToolTextFormat(sources: { header?: string; query?: string; decorator?: McpTextFormat; fallback: McpTextFormat }): { format: McpTextFormat } | { invalid: string } {
  for (const given of [sources.header, sources.query]) {
    if (given === undefined) continue;
    return isMcpTextFormat(given) ? { format: given } : { invalid: given };
  }
  return { format: sources.decorator ?? sources.fallback };
}
