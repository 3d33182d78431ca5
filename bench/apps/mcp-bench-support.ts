/**
 * Shared by the `mcp` workload's apps: how a server reports to the runner (its port once, its CPU
 * usage on request, over IPC), a bare `node:http` server for the SDK references, and the `echo`
 * tool as the SDK's low-level `Server` sees it.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { CallToolRequest } from '@modelcontextprotocol/server';

/** Sends `{ port }` to the runner and answers its `'cpu'` messages with `process.cpuUsage()`. */
export function reportToRunner(port: number): void {
  process.send?.({ port });
  process.on('message', (message) => {
    if (message === 'cpu') process.send?.({ cpu: process.cpuUsage() });
  });
}

/** A bare `node:http` server on 127.0.0.1 running `handle` per request (500 when it throws). */
export function listenBare(handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>): void {
  const http = createServer((req, res) => {
    handle(req, res).catch(() => {
      res.statusCode = 500;
      res.end();
    });
  });
  http.keepAliveTimeout = 72_000;
  http.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => reportToRunner((http.address() as { port: number }).port));
}

/** `tools/list` of the references: the `echo` tool, built once. */
export const ECHO_TOOLS = [
  {
    name: 'echo',
    description: 'Returns its text',
    inputSchema: { type: 'object' as const, properties: { text: { type: 'string' } }, required: ['text'] },
    outputSchema: { type: 'object' as const, properties: { text: { type: 'string' } }, required: ['text'] },
  },
];

/** `tools/call` of the references: `{ text }` back as `structuredContent` and compact JSON text. */
export function callEcho(request: CallToolRequest) {
  const result = { text: String((request.params.arguments as { text?: unknown } | undefined)?.text) };
  return { content: [{ type: 'text' as const, text: JSON.stringify(result) }], structuredContent: result };
}
