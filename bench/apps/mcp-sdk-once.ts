/**
 * Reference of the `mcp` workload (a measurement, not a product): the SDK's low-level `Server`
 * built ONCE and connected to a minimal in-process transport; each HTTP POST hands its message to
 * that server (id remapped so concurrent callers' ids never collide) and answers the server's
 * response as one JSON body. Bare `node:http`, no Nest, no Fastify. It shows what the SDK's own
 * request handling (message schemas, dispatch, handler) costs per call when nothing is built per
 * request — against `mcp-sdk-floor.ts`, which builds a server and a transport per request as
 * `createMcpHandler` does. 2025-era requests only: a 2026-07-28 exchange needs the SDK's per-request
 * era setup (negotiated version, envelope identity), which `createMcpHandler` does internally.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { classifyInboundRequest, Server, type JSONRPCMessage, type Transport } from '@modelcontextprotocol/server';
import { callEcho, ECHO_TOOLS, listenBare } from './mcp-bench-support.js';

/** Delivers each POSTed message to the one server and resolves with its response. */
class OneServerTransport implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  private next = 1;
  private readonly waiting = new Map<number, (message: JSONRPCMessage) => void>();
  async start(): Promise<void> {}
  async close(): Promise<void> {}
  async send(message: JSONRPCMessage): Promise<void> {
    const id = (message as { id?: unknown }).id;
    if (typeof id !== 'number') return; // notifications: dropped in this measurement
    const done = this.waiting.get(id);
    this.waiting.delete(id);
    done?.(message);
  }
  notify(message: Record<string, unknown>, era: 'legacy' | 'modern'): void {
    this.onmessage?.(message as JSONRPCMessage, { classification: { era } });
  }
  call(message: { id: unknown } & Record<string, unknown>, era: 'legacy' | 'modern', revision?: string): Promise<JSONRPCMessage> {
    const id = this.next++;
    return new Promise((resolve) => {
      this.waiting.set(id, (response) => resolve({ ...response, id: message.id } as JSONRPCMessage));
      this.onmessage?.({ ...message, id } as JSONRPCMessage, { classification: { era, revision } });
    });
  }
}

const server = new Server({ name: 'bench', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler('tools/list', () => ({ tools: ECHO_TOOLS }));
server.setRequestHandler('tools/call', callEcho);
const transport = new OneServerTransport();
await server.connect(transport);

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => resolve(body));
    req.on('error', reject);
  });
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== 'POST') {
    res.writeHead(405, { allow: 'POST' }).end();
    return;
  }
  const body = JSON.parse(await readBody(req));
  const header = (name: string) => (typeof req.headers[name] === 'string' ? (req.headers[name] as string) : undefined);
  const route = classifyInboundRequest({
    httpMethod: 'POST',
    protocolVersionHeader: header('mcp-protocol-version'),
    mcpMethodHeader: header('mcp-method'),
    mcpNameHeader: header('mcp-name'),
    body,
  });
  const era = route.kind === 'modern' ? 'modern' : 'legacy';
  if (body.id === undefined) {
    transport.notify(body, era);
    res.writeHead(202).end();
    return;
  }
  const response = await transport.call(body, era, header('mcp-protocol-version'));
  const text = JSON.stringify(response);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

listenBare(handle);
