import {
  classifyInboundRequest,
  isJsonContentType,
  SUPPORTED_PROTOCOL_VERSIONS,
  type JSONRPCMessage,
  type Transport,
} from '@modelcontextprotocol/server';
import type { FastifyRequest } from 'fastify';
import type { RpcId } from '@nest-jsonrpc/protocol';
import type { RpcHttpExchange } from '../context/rpc-context.js';

/** The methods the shared server answers; everything else takes the SDK's per-request path. */
const SHARED_METHODS: ReadonlySet<unknown> = new Set(['tools/call', 'tools/list', 'ping']);

/** One call the shared server is serving: who asked, with which id. */
export interface McpSharedCall {
  readonly exchange: RpcHttpExchange;
  /** The client's JSON-RPC id (the server sees a unique one of ours). */
  readonly id: RpcId;
}

interface Pending extends McpSharedCall {
  readonly resolve: (message: JSONRPCMessage) => void;
}

/**
 * The 2025-era hot path: ONE SDK `Server`, built at startup, connected to this in-process
 * transport. Each HTTP request hands its message to that server under a unique id and gets the
 * server's answer back — the SDK still parses the request, dispatches it, validates params and
 * writes every JSON-RPC error; what is skipped is building a server, a web `Request`, a
 * transport and a web `Response` per call (the SDK's `createMcpHandler` cannot reuse them).
 *
 * Only what the SDK's stateless JSON transport would accept untouched comes here (see
 * `accepts`): a single 2025-era request for `tools/call`, `tools/list` or `ping`, no `_meta`
 * (so no progress token), the headers that transport requires. Anything else — `initialize`,
 * notifications, batches, progress, the 2026-07-28 era, malformed input — goes to the SDK's
 * per-request path, which owns those answers.
 */
export class McpSharedServerTransport implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();

  async start(): Promise<void> {}

  async close(): Promise<void> {
    this.pending.clear();
    this.onclose?.();
  }

  /** Whether the shared server may answer this request exactly as the per-request path would. */
  accepts(request: FastifyRequest, body: unknown): boolean {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) return false;
    const { jsonrpc, method, id, params } = body as { jsonrpc?: unknown; method?: unknown; id?: unknown; params?: unknown };
    if (jsonrpc !== '2.0' || !SHARED_METHODS.has(method)) return false;
    if (!(typeof id === 'string' || Number.isSafeInteger(id))) return false;
    if (params !== undefined && (params === null || typeof params !== 'object' || Array.isArray(params) || '_meta' in params)) return false;
    const headers = request.headers;
    const accept = headers.accept;
    if (typeof accept !== 'string' || !accept.includes('application/json') || !accept.includes('text/event-stream')) return false;
    if (!isJsonContentType(single(headers['content-type']))) return false;
    const version = headers['mcp-protocol-version'];
    if (version !== undefined && (typeof version !== 'string' || !SUPPORTED_PROTOCOL_VERSIONS.includes(version))) return false;
    const route = classifyInboundRequest({
      httpMethod: 'POST',
      protocolVersionHeader: version,
      mcpMethodHeader: single(headers['mcp-method']),
      mcpNameHeader: single(headers['mcp-name']),
      body,
    });
    return route.kind === 'legacy';
  }

  /** Hands one accepted request to the server; resolves with its answer, under the client's id. */
  call(body: { id: RpcId } & Record<string, unknown>, exchange: RpcHttpExchange): Promise<JSONRPCMessage> {
    const id = this.nextId++;
    if (this.nextId === Number.MAX_SAFE_INTEGER) this.nextId = 1;
    return new Promise((resolve) => {
      this.pending.set(id, { exchange, id: body.id, resolve });
      this.onmessage?.({ ...body, id } as JSONRPCMessage, { classification: { era: 'legacy' } });
    });
  }

  /** The call behind the id the server's handler sees. */
  callOf(serverId: unknown): McpSharedCall | undefined {
    return typeof serverId === 'number' ? this.pending.get(serverId) : undefined;
  }

  async send(message: JSONRPCMessage): Promise<void> {
    // Only responses travel back (the shared path never carries progress or server requests).
    const id = (message as { id?: unknown }).id;
    if (typeof id !== 'number' || !('result' in message || 'error' in message)) return;
    const call = this.pending.get(id);
    if (!call) return;
    this.pending.delete(id);
    call.resolve({ ...message, id: call.id } as JSONRPCMessage);
  }
}

function single(value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
