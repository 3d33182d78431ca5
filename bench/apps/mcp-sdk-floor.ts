/**
 * Reference of the `mcp` workload, not a contender: the official SDK's own serving entry with
 * nothing around it — `createMcpHandler` (both protocol eras, stateless) behind `toNodeHandler`
 * on a bare `node:http` server, no Nest, no Fastify, no pipeline. The per-request server is the
 * SDK's low-level `Server` with the `echo` tool's list and call handlers (no argument validation,
 * the tool list built once): what any endpoint served by `createMcpHandler` pays per call at least.
 * Reports its port, and its CPU usage on request, over IPC.
 */
import { createServer } from 'node:http';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, Server, type CallToolRequest } from '@modelcontextprotocol/server';

const tools = [
  {
    name: 'echo',
    description: 'Returns its text',
    inputSchema: { type: 'object' as const, properties: { text: { type: 'string' } }, required: ['text'] },
    outputSchema: { type: 'object' as const, properties: { text: { type: 'string' } }, required: ['text'] },
  },
];
const listTools = () => ({ tools });
const callTool = (request: CallToolRequest) => {
  const text = String((request.params.arguments as { text?: unknown } | undefined)?.text);
  const result = { text };
  return { content: [{ type: 'text' as const, text: JSON.stringify(result) }], structuredContent: result };
};

const handler = createMcpHandler(() => {
  const server = new Server({ name: 'bench', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler('tools/list', listTools);
  server.setRequestHandler('tools/call', callTool);
  return server;
});
const serve = toNodeHandler(handler);
const http = createServer((req, res) => {
  if (req.url !== '/mcp') {
    res.statusCode = 404;
    return res.end();
  }
  serve(req, res).catch(() => {
    res.statusCode = 500;
    res.end();
  });
});
http.keepAliveTimeout = 72_000;
http.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  process.send?.({ port: (http.address() as { port: number }).port });
});
process.on('message', (message) => {
  if (message === 'cpu') process.send?.({ cpu: process.cpuUsage() });
});
