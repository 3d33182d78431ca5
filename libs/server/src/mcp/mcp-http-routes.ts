import type { Logger } from '@nestjs/common';
import { toWebRequest } from '@modelcontextprotocol/node';
import {
  createMcpHandler,
  isLegacyRequest,
  legacyStatelessFallback,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  validateHostHeader,
  validateOriginHeader,
  WebStandardStreamableHTTPServerTransport,
  type CallToolRequest,
  type LegacyHttpHandler,
  type McpHttpHandler,
  type McpRequestContext,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { JSON_CONTENT_TYPE, serializeError, type RpcId } from '@nest-jsonrpc/protocol';
import { requestUser } from '../context/caller-identity.js';
import type { RpcHttpExchange } from '../context/rpc-context.js';
import { bodyLimitOf } from '../http/body-limit.js';
import { methodNotAllowed, type EarlyRefusal, type HttpRouteGroup } from '../http/http-edge.js';
import { NOT_JSON, PARSE_ERROR, parseJsonText } from '../http/json-text.js';
import type { RpcReplyWriter } from '../http/rpc-reply-writer.js';
import type { ResolvedJsonRpcOptions } from '../options/json-rpc-options.js';
import type { McpResourceServer } from './auth/mcp-resource-server.js';
import type { McpInFlightRequests } from './mcp-in-flight-requests.js';
import { CANCELLED_REQUEST, TASKS_EXTENSION, type McpNativeAnswer, type McpNativeMethods } from './mcp-native-methods.js';
import type { McpToolCatalog } from './mcp-tool-catalog.js';
import type { McpRowListener, McpToolResult, McpToolRunner } from './mcp-tool-runner.js';

/**
 * `POST <mcp.path>`: MCP Streamable HTTP, stateless, both protocol eras (2026-07-28 per-request
 * envelopes and the 2025 `initialize` handshake). The route lives in the app's own server
 * (Fastify or Express), so its hooks or middleware run and the headers they set (CORS…) stay on
 * the answer; every answer is written by the module's one reply writer (with `X-Request-Id`).
 * `GET`/`DELETE` (2025 session operations) answer 405: there are no sessions.
 *
 * Each request, in order: the body is parsed; with `mcp.auth`, its bearer credentials are checked
 * (`McpResourceServer.admit`); the stateless methods the SDK would serve untouched — `tools/list`,
 * `tools/call`, `ping`, the tasks methods — are answered natively (`McpNativeMethods`: no SDK
 * server per request); everything else goes to the official SDK.
 *
 * The SDK's composition is its documented hand-wired one (`isLegacyRequest` in front of a
 * `legacy: 'reject'` handler): modern requests go to `createMcpHandler`, 2025-era requests that
 * asked for progress to the SDK's `legacyStatelessFallback` (an SSE answer), the other 2025-era
 * requests to a stateless transport with `enableJsonResponse`. The SDK asks for a server instance
 * per request; ours is a bare low-level `Server` whose handlers and tool lists are built once.
 */
export class McpHttpRoutes {
  protected readonly handler: McpHttpHandler;
  protected readonly legacyStreaming: LegacyHttpHandler;
  /** The exchange of each HTTP request the SDK is serving (its handlers see the web `Request`). */
  private readonly exchanges = new WeakMap<Request, RpcHttpExchange>();
  private readonly allowedHosts: string[];

  constructor(
    protected readonly catalog: McpToolCatalog,
    protected readonly runner: McpToolRunner,
    protected readonly writer: RpcReplyWriter,
    protected readonly options: Pick<ResolvedJsonRpcOptions, 'mcp' | 'maxRequestSize'>,
    protected readonly logger: Logger,
    /** The requests `notifications/cancelled` may cancel while they run (`McpInFlightRequests`). */
    protected readonly inFlight: McpInFlightRequests,
    /** The stateless methods answered without an SDK server; absent: the SDK answers everything. */
    protected readonly native?: McpNativeMethods,
    /** `mcp.auth`: credentials and challenges. */
    protected readonly resourceServer?: McpResourceServer,
  ) {
    this.allowedHosts = [...options.mcp.allowedHosts];
    const onerror = (error: Error) => this.logger.warn(`MCP: ${error.message}`);
    // The platform adapter already read the body under `maxRequestSize`; the SDK gets it parsed.
    const maxRequestBodySize = bodyLimitOf(options.maxRequestSize);
    this.handler = createMcpHandler((ctx) => this.serverFor(ctx), { onerror, maxRequestBodySize, legacy: 'reject' });
    this.legacyStreaming = legacyStatelessFallback((ctx) => this.serverFor(ctx), onerror, { maxRequestBodySize });
  }

  routes(): HttpRouteGroup {
    const path = this.options.mcp.path;
    const hint = { allow: 'POST', hint: 'this MCP endpoint is stateless: use POST' };
    return {
      name: 'MCP request',
      family: 'rpc',
      body: 'json',
      admit: this.allowedHosts.length ? (exchange) => this.checkHost(exchange) : undefined,
      routes: [{ method: 'POST', path, handle: (exchange) => this.handlePost(exchange) }, methodNotAllowed(this.writer, 'rpc', ['GET', 'DELETE', 'PUT', 'PATCH'], path, hint)],
      onClose: () => this.handler.close(),
    };
  }

  /** DNS-rebinding protection: `Host`, and `Origin` when sent, must name an allowed host (the SDK's checks). */
  checkHost(exchange: RpcHttpExchange): EarlyRefusal | undefined {
    const { headers } = exchange;
    const host = validateHostHeader(headers.host, this.allowedHosts);
    const verdict = host.ok ? validateOriginHeader(headers.origin, this.allowedHosts) : host;
    return verdict.ok ? undefined : { kind: 'hostRefused', detail: { message: verdict.message } };
  }

  protected async handlePost(exchange: RpcHttpExchange): Promise<void> {
    const body = parseJsonText(exchange.body);
    if (body === NOT_JSON) return this.writer.send(exchange, 400, serializeError(null, PARSE_ERROR));
    // The tool calls of one JSON array share one request span, as a batch on `/rpc` does.
    exchange.isBatch = Array.isArray(body);
    if (this.resourceServer) {
      const refusal = await this.resourceServer.admit(exchange);
      if (refusal) return this.sendAnswer(exchange, { status: refusal.status, message: { jsonrpc: '2.0', id: idOf(body), error: refusal.error }, ...('wwwAuthenticate' in refusal && { wwwAuthenticate: refusal.wwwAuthenticate }) });
    }
    const call = this.native?.accept({ headers: exchange.headers, body });
    if (call) {
      const answer = await this.native!.answer(call, exchange);
      return answer === CANCELLED_REQUEST ? this.sendNoResponse(exchange) : this.sendAnswer(exchange, answer);
    }
    const challenge = this.challengeOf(body, exchange);
    if (challenge) return this.sendAnswer(exchange, challenge);
    const webRequest = await toWebRequest(exchange.raw, body, { signal: exchange.signal });
    this.exchanges.set(webRequest, exchange);
    const response = await this.fetch(webRequest, body);
    // The SDK accepted the message(s) (notifications answer 202): a `notifications/cancelled` among them cancels its request.
    if (response.status === 202) this.inFlight.cancelFrom(body, exchange);
    // A JSON answer is sent as text (one write); an SSE answer streams as the SDK produces it.
    await this.writer.sendWebResponse(exchange, response);
  }

  /**
   * The HTTP answer of a request its client cancelled: MCP says to send no response for it, and a
   * POST that carried a request is answered with JSON or an event stream (a 202 is for
   * notifications only), so it is an event stream that ends with no message. Both SDK clients
   * read it as the end of a request they have stopped waiting for, silently.
   */
  protected sendNoResponse(exchange: RpcHttpExchange): void {
    this.writer.sendBody(exchange, 200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' }, '');
  }

  /** One exchange through the SDK, by era (see the class comment). */
  protected async fetch(webRequest: Request, body: unknown): Promise<Response> {
    if (!(await isLegacyRequest(webRequest, body))) return this.handler.fetch(webRequest, { parsedBody: body });
    if (asksForProgress(body)) return this.legacyStreaming(webRequest, { parsedBody: body });
    const server = this.serverFor({ era: 'legacy', requestInfo: webRequest });
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    try {
      return await transport.handleRequest(webRequest, { parsedBody: body });
    } finally {
      void transport.close().catch(() => undefined);
      void server.close().catch(() => undefined);
    }
  }

  /** A JSON-RPC answer decided here (natively, or a challenge), with its `WWW-Authenticate`. */
  protected sendAnswer(exchange: RpcHttpExchange, answer: McpNativeAnswer): void {
    const headers: Record<string, string> = { 'content-type': JSON_CONTENT_TYPE };
    if (answer.wwwAuthenticate) headers['www-authenticate'] = answer.wwwAuthenticate;
    this.writer.sendBody(exchange, answer.status, headers, JSON.stringify(answer.message));
  }

  /**
   * `mcp.auth`, on the SDK's path (batches, progress): the challenge for the first `tools/call`
   * the caller's roles do not pass, before anything runs — an answer streamed as SSE cannot turn
   * into a 401 once it has begun.
   */
  protected challengeOf(body: unknown, exchange: RpcHttpExchange): McpNativeAnswer | undefined {
    if (!this.resourceServer) return undefined;
    const messages = Array.isArray(body) ? body : [body];
    for (const message of messages) {
      const { method, params } = (message ?? {}) as { method?: unknown; params?: { name?: unknown } };
      if (method !== 'tools/call') continue;
      const entry = this.catalog.find(params?.name, exchange.roles);
      const challenge = entry && this.resourceServer.challengeBefore(entry.access, exchange.roles, requestUser(exchange.request) !== undefined);
      if (challenge) {
        return { status: challenge.status, message: { jsonrpc: '2.0', id: Array.isArray(body) ? null : idOf(body), error: challenge.error }, wwwAuthenticate: challenge.wwwAuthenticate };
      }
    }
    return undefined;
  }

  /**
   * The SDK's per-request server: handlers and tool lists are shared, built once. It declares
   * tasks when durable streams are on, in the era's words: the Tasks extension (2026-07-28), the
   * `tasks` capability (2025-11-25).
   */
  protected serverFor(ctx: McpRequestContext): Server {
    const tasks = this.native?.servesTasks ? (ctx.era === 'modern' ? { extensions: { [TASKS_EXTENSION]: {} } } : { tasks: { requests: { tools: { call: {} } }, cancel: {} } }) : {};
    const server = new Server({ name: this.options.mcp.name, version: this.options.mcp.version }, { capabilities: { tools: {}, ...tasks } });
    server.setRequestHandler('tools/list', ctx.era === 'modern' ? this.listToolsModern : (request, context) => this.listTools(request, context));
    server.setRequestHandler('tools/call', (request, context) => this.callTool(request, context));
    return server;
  }

  protected listTools(_request: unknown, ctx: ServerContext): { tools: never[] } {
    return this.toolList(ctx, 'legacy');
  }

  protected readonly listToolsModern = (_request: unknown, ctx: ServerContext): { tools: never[] } => this.toolList(ctx, 'modern');

  private toolList(ctx: ServerContext, era: 'modern' | 'legacy'): { tools: never[] } {
    const { exchange } = this.callerOf(ctx);
    const list = this.native?.toolList(era, exchange.roles) ?? { tools: this.catalog.list(exchange.roles) };
    return list as { tools: never[] };
  }

  /**
   * `tools/call`: an unknown tool, a hidden one and one whose roles the caller lacks all answer the
   * same protocol error (-32602), so a caller learns nothing about tools it may not call.
   */
  protected callTool(request: CallToolRequest, ctx: ServerContext): Promise<McpToolResult> {
    const { exchange, id } = this.callerOf(ctx);
    const { name, arguments: args, _meta } = request.params;
    const entry = this.catalog.find(name, exchange.roles);
    if (!entry) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}`);
    const token = _meta?.progressToken ?? ctx.mcpReq._meta?.progressToken;
    const onRow: McpRowListener | undefined =
      token === undefined
        ? undefined
        : (progress, message) =>
            ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress, ...(message !== undefined && { message }) } });
    const options = { format: entry.format ?? this.options.mcp.defaultFormat, id, onRow };
    // The calls of one batch share an exchange, and a task is cancelled with tasks/cancel: neither is registered.
    if (exchange.isBatch || request.params.task !== undefined) return this.runner.call(entry, args, exchange, options);
    // Cancelling aborts the exchange, which is the web request's signal: the call stops, and the
    // SDK's per-request server and transport, closed when that signal aborts (both eras' entries),
    // send no response; the event stream ends.
    const inFlight = this.inFlight.begin(exchange, id);
    return this.runner.call(entry, args, exchange, options).finally(() => inFlight.end());
  }

  /** Who is calling: the web `Request` the SDK serves names the exchange. */
  private callerOf(ctx: ServerContext): { exchange: RpcHttpExchange; id: RpcId } {
    const req = ctx.http?.req;
    const exchange = req ? this.exchanges.get(req) : undefined;
    if (!exchange) throw new ProtocolError(ProtocolErrorCode.InternalError, 'Internal error');
    return { exchange, id: ctx.mcpReq.id };
  }
}

/** The id of a single request body, for an answer refusing it (null when there is none). */
function idOf(body: unknown): RpcId {
  const id = (body as { id?: unknown } | null)?.id;
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
}

/** A request (or a batch item) whose `_meta` carries a `progressToken`: its answer must stream. */
function asksForProgress(body: unknown): boolean {
  if (Array.isArray(body)) return body.some(asksForProgress);
  const meta = (body as { params?: { _meta?: { progressToken?: unknown } } } | null)?.params?._meta;
  return meta !== null && typeof meta === 'object' && meta.progressToken !== undefined;
}
