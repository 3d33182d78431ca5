/**
 * Hand-built MCP requests of both eras, as the SDK clients send them: the 2025 era with
 * `Accept: application/json, text/event-stream` and no envelope; 2026-07-28 with the per-request
 * `_meta` envelope and the standard headers (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`).
 */
export type Era = '2025' | '2026';

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

export interface WireOptions {
  /** Extra `_meta` (2026: merged into the envelope). */
  meta?: Record<string, unknown>;
  /** 2026: client capabilities of the envelope. */
  capabilities?: Record<string, unknown>;
  /** Header overrides (a value of undefined removes the header). */
  headers?: Record<string, string | undefined>;
}

export function mcpRequest(era: Era, id: string | number, method: string, params: Record<string, unknown> = {}, o: WireOptions = {}): { headers: Record<string, string>; body: Record<string, unknown> } {
  const headers: Record<string, string | undefined> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  let meta = o.meta;
  if (era === '2026') {
    meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': o.capabilities ?? {}, ...o.meta };
    headers['mcp-protocol-version'] = '2026-07-28';
    headers['mcp-method'] = method;
    const name = method === 'tools/call' ? params.name : method.startsWith('tasks/') ? params.taskId : undefined;
    if (typeof name === 'string') headers['mcp-name'] = name;
  }
  Object.assign(headers, o.headers);
  const clean = Object.fromEntries(Object.entries(headers).filter(([, v]) => v !== undefined)) as Record<string, string>;
  return { headers: clean, body: { jsonrpc: '2.0', id, method, params: { ...params, ...(meta && { _meta: meta }) } } };
}

/** POSTs an MCP request and reads the answer (JSON, or the last `data:` of an SSE answer). */
export async function postMcp(url: string, request: { headers: Record<string, string>; body: unknown }): Promise<{ status: number; headers: Headers; body: any }> {
  const res = await fetch(url, { method: 'POST', headers: request.headers, body: typeof request.body === 'string' ? request.body : JSON.stringify(request.body) });
  const text = await res.text();
  if (res.headers.get('content-type')?.startsWith('text/event-stream')) {
    const data = text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)));
    return { status: res.status, headers: res.headers, body: data.at(-1) };
  }
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}
