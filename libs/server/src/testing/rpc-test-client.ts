import type { INestApplication } from '@nestjs/common';
import {
  JsonRpcClient,
  JsonRpcProtocolError,
  type CallOptions,
  type HeadersSource,
  type JsonRpcClientOptions,
  type JsonRpcParams,
} from '@nest-jsonrpc/client';
import type { DurableStartAnswer } from '@nest-jsonrpc/protocol';
import { JSON_RPC_MODULE_OPTIONS, type ResolvedJsonRpcOptions } from '../options/json-rpc-options.js';

/** What `createRpcTestClient` passes on to the client (the URLs come from the app). */
export type RpcTestClientOptions = Omit<JsonRpcClientOptions, 'url' | 'streamUrl' | 'streamsUrl'>;

/** An MCP `tools/call` result, as an agent receives it. */
export interface McpCallToolResult {
  content: Array<{ type: string; text?: string; [key: string]: unknown }>;
  /** The method's result when the tool has an output schema (never on an error result). */
  structuredContent?: Record<string, unknown>;
  /** The call failed: an RPC error (guard, limit, validation, the handler), rendered for the agent. */
  isError?: boolean;
  /** On an error result, the error object under `"nest-jsonrpc/error"`: `{ code, message, data? }`. */
  _meta?: Record<string, unknown>;
}

/** The routes of the app's JsonRpcModule the client calls. */
type ServedRoutes = Pick<ResolvedJsonRpcOptions, 'path' | 'stream' | 'durable' | 'mcp'>;

/** The MCP route asks 2025-era clients to accept both JSON and SSE answers. */
const MCP_ACCEPT = 'application/json, text/event-stream';

/**
 * A `JsonRpcClient` bound to one Nest application: the JSON-RPC, stream and durable URLs are the
 * ones the app's `JsonRpcModule` serves, and every request goes over HTTP through the app's real
 * routes, so guards, roles, rate limits, the cache, interceptors, pipes and params validation all
 * run. Errors are the client's classes (`JsonRpcError` with `code`, `message`, `data`, ...).
 */
export class RpcTestClient extends JsonRpcClient {
  /** The app's base URL, e.g. `http://127.0.0.1:41234`. */
  readonly baseUrl: string;
  /** `POST <mcp.path>`, when the app serves MCP. */
  readonly mcpUrl: string | undefined;

  constructor(
    baseUrl: string,
    private readonly served: ServedRoutes,
    private readonly options: RpcTestClientOptions = {},
  ) {
    super({ ...options, url: baseUrl + served.path, streamUrl: baseUrl + served.stream.path, streamsUrl: baseUrl + served.durable.path });
    this.baseUrl = baseUrl;
    this.mcpUrl = served.mcp.enabled ? baseUrl + served.mcp.path : undefined;
  }

  /** The same app with other headers (another user's credentials, say); the options are kept. */
  withHeaders(headers: HeadersSource): RpcTestClient {
    return new RpcTestClient(this.baseUrl, this.served, { ...this.options, headers });
  }

  /**
   * Starts a durable method (`@RpcStream({ durable: true })`): resolves the `stream_id` answer once
   * the stream runs; guards, roles and validation errors reject as for `call`. Read its events
   * with `attach(answer.stream_id)`.
   */
  async start(method: string, params?: JsonRpcParams, options?: CallOptions): Promise<DurableStartAnswer> {
    const answer = await this.call<DurableStartAnswer>(method, params, options);
    if (typeof answer?.stream_id !== 'string') {
      throw new JsonRpcProtocolError(`${method} did not start a durable stream: its result has no stream_id`, {
        url: this.url,
        snippet: JSON.stringify(answer),
      });
    }
    return answer;
  }

  /**
   * Calls an MCP tool on `POST <mcp.path>` as an agent does (`tools/call`). Resolves the tool
   * result: an RPC error is a result with `isError: true`, its text `Error <code>: <message>` and
   * the error object in `_meta["nest-jsonrpc/error"]` (docs/mcp.md, "What a call answers"); an
   * unknown or hidden tool rejects with JsonRpcError -32602.
   */
  async callTool(name: string, args: Record<string, unknown> = {}, options?: CallOptions): Promise<McpCallToolResult> {
    if (this.mcpUrl === undefined) throw new Error('callTool: the app does not serve MCP (JsonRpcModule option mcp: { enabled: true })');
    const clientFetch = this.options.fetch ?? globalThis.fetch.bind(globalThis);
    const mcp = new JsonRpcClient({
      ...this.options,
      url: this.mcpUrl,
      fetch: (input, init) => {
        const headers = new Headers(init?.headers);
        headers.set('accept', MCP_ACCEPT);
        return clientFetch(input, { ...init, headers });
      },
    });
    return mcp.call<McpCallToolResult>('tools/call', { name, arguments: args }, options);
  }
}

/**
 * A client for the Nest application `app` (from `Test.createTestingModule(...).compile()` then
 * `createNestApplication(...)`, on any HTTP platform). Starts the app on `127.0.0.1`, port 0, unless
 * it listens already; the test closes the app (`await app.close()`) as usual.
 */
export async function createRpcTestClient(app: INestApplication, options: RpcTestClientOptions = {}): Promise<RpcTestClient> {
  let served: ResolvedJsonRpcOptions;
  try {
    served = app.get<ResolvedJsonRpcOptions>(JSON_RPC_MODULE_OPTIONS, { strict: false });
  } catch {
    throw new Error('createRpcTestClient: the application does not import JsonRpcModule (add JsonRpcModule.forRoot() to the testing module\'s imports)');
  }
  const server = app.getHttpServer() as { listening?: boolean } | undefined;
  if (!server?.listening) await app.listen(0, '127.0.0.1');
  return new RpcTestClient((await app.getUrl()).replace(/\/+$/, ''), served, options);
}
