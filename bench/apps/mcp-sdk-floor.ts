/**
 * Reference of the `mcp` workload, not a contender: the official SDK's own serving entry with
 * nothing around it — `createMcpHandler` (both protocol eras, stateless) behind `toNodeHandler`
 * on a bare `node:http` server, no Nest, no Fastify, no pipeline. The per-request server is the
 * SDK's low-level `Server` with the `echo` tool's list and call handlers (no argument validation,
 * the tool list built once): what any endpoint served by `createMcpHandler` pays per call at least.
 * Reports its port, and its CPU usage on request, over IPC.
 */
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, Server } from '@modelcontextprotocol/server';
import { callEcho, ECHO_TOOLS, listenBare } from './mcp-bench-support.js';

const listTools = () => ({ tools: ECHO_TOOLS });

const handler = createMcpHandler(() => {
  const server = new Server({ name: 'bench', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler('tools/list', listTools);
  server.setRequestHandler('tools/call', callEcho);
  return server;
});
const serve = toNodeHandler(handler);
listenBare(async (req, res) => {
  if (req.url !== '/mcp') {
    res.statusCode = 404;
    res.end();
    return;
  }
  await serve(req, res);
});
