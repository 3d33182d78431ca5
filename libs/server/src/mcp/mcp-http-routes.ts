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
import type { FastifyInstance, FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify';
import { RpcErrorCode, type RpcErrorObject } from '@nest-jsonrpc/protocol';
import { RpcHttpExchange } from '../context/rpc-context.js';
import { bodyBoundsOf, bodyLimitOf, registerJsonRpcBodyParser } from '../http/json-body-parser.js';
import { NOT_JSON, parseJsonText } from '../http/json-text.js';
import { requestIdOf } from '../http/request-id.js';
import type { RpcReplyWriter } from '../http/rpc-reply-writer.js';
import { methodNotAllowed, transportErrorHandler } from '../http/transport-errors.js';
import type { ResolvedJsonRpcOptions } from '../options/json-rpc-options.js';
import { McpSharedServerTransport, type McpSharedCall } from './mcp-shared-server.js';
import type { McpToolCatalog } from './mcp-tool-catalog.js';
import type { McpRowListener, McpToolResult, McpToolRunner } from './mcp-tool-runner.js';

const PARSE_ERROR: RpcErrorObject = Object.freeze({ code: RpcErrorCode.ParseError, message: 'Parse error' });
/** What the SDK's own DNS-rebinding guards answer (a JSON-RPC error with no id). */
const HOST_REFUSED_CODE = -32000;

/**
 * `POST <mcp.path>`: MCP Streamable HTTP, stateless, served by the official SDK
 * (`createMcpHandler`, both protocol eras: 2026-07-28 per-request envelopes and the 2025
 * `initialize` handshake). The route lives in the app's Fastify instance, so its hooks run and
 * the headers they set (CORS…) stay on the answer; the SDK's web `Response` is copied onto the
 * Fastify reply. `GET`/`DELETE` (2025 session operations) answer 405: there are no sessions.
 *
 * The SDK asks for one server instance per request; ours is a bare low-level `Server` whose two
 * handlers (and the tool list they answer) are built once, so an instance costs a few objects.
 *
 * The composition is the SDK's documented hand-wired one (`isLegacyRequest` in front of a
 * `legacy: 'reject'` handler): modern requests go to `createMcpHandler` (a JSON answer unless the
 * call sends progress), 2025-era requests that asked for progress to the SDK's own
 * `legacyStatelessFallback` (an SSE answer), and the other 2025-era requests to a stateless
 * transport with `enableJsonResponse` — one JSON body instead of an SSE stream for the common
 * call, which is what the SDK's fallback cannot be told to do.
 */
export class McpHttpRoutes {
  protected readonly handler: McpHttpHandler;
  protected readonly legacyStreaming: LegacyHttpHandler;
  /** The 2025-era hot path: one server, built once (see mcp-shared-server.ts). */
  protected readonly shared = new McpSharedServerTransport();
  private readonly sharedServer: Server;
  /** The exchange of each HTTP request the SDK is serving (its handlers see the web `Request`). */
  private readonly exchanges = new WeakMap<Request, RpcHttpExchange>();
  private readonly allowedHosts: string[];

  constructor(
    protected readonly catalog: McpToolCatalog,
    protected readonly runner: McpToolRunner,
    protected readonly writer: RpcReplyWriter,
    protected readonly options: ResolvedJsonRpcOptions,
    protected readonly logger: Logger,
  ) {
    this.allowedHosts = [...options.mcp.allowedHosts];
    this.listTools = this.listTools.bind(this);
    this.callTool = this.callTool.bind(this);
    this.handlePost = this.handlePost.bind(this);
    this.checkHost = this.checkHost.bind(this);
    const onerror = (error: Error) => this.logger.warn(`MCP: ${error.message}`);
    // Fastify already read the body under `maxRequestSize`; the SDK gets it parsed.
    const maxRequestBodySize = bodyLimitOf(options.maxRequestSize);
    this.handler = createMcpHandler((ctx) => this.serverFor(ctx), { onerror, maxRequestBodySize, legacy: 'reject' });
    this.legacyStreaming = legacyStatelessFallback((ctx) => this.serverFor(ctx), onerror, { maxRequestBodySize });
    this.sharedServer = this.serverFor({ era: 'legacy' });
    this.sharedServer.onerror = onerror;
  }

  plugin(): FastifyPluginCallback {
    const { options, writer, logger } = this;
    const path = options.mcp.path;
    const bounds = bodyBoundsOf(options, writer);
    const bodyLimit = bounds.limit;
    return (instance: FastifyInstance, _opts, done) => {
      registerJsonRpcBodyParser(instance, bounds);
      instance.setErrorHandler(transportErrorHandler(options.maxRequestSize, writer, logger, 'MCP request'));
      this.sharedServer.connect(this.shared).then(() => done(), done);
      if (this.allowedHosts.length) instance.addHook('onRequest', this.checkHost);
      instance.route({ method: 'POST', url: path, bodyLimit, handler: this.handlePost });
      instance.route({ method: ['GET', 'DELETE', 'PUT', 'PATCH'], url: path, exposeHeadRoute: false, handler: methodNotAllowed(writer, 'POST', 'this MCP endpoint is stateless: use POST') });
      instance.addHook('preClose', (hookDone) => {
        Promise.allSettled([this.handler.close(), this.sharedServer.close()]).then(() => hookDone());
      });
    };
  }

  /** DNS-rebinding protection: `Host`, and `Origin` when sent, must name an allowed host (the SDK's checks). */
  checkHost(request: FastifyRequest, reply: FastifyReply, done: () => void): void {
    const host = validateHostHeader(request.headers.host, this.allowedHosts);
    const verdict = host.ok ? validateOriginHeader(request.headers.origin, this.allowedHosts) : host;
    if (verdict.ok) return done();
    this.writer.sendTransportError(request, reply, 403, { code: HOST_REFUSED_CODE, message: verdict.message });
  }

  protected async handlePost(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const body = parseJsonText(request.body as string | undefined);
    if (body === NOT_JSON) return this.writer.sendTransportError(request, reply, 400, PARSE_ERROR);
    const exchange = new RpcHttpExchange(request, reply, requestIdOf(request), this.options.security.rolesResolver);
    if (this.shared.accepts(request, body)) {
      const answer = await this.shared.call(body as McpSharedCall & Record<string, unknown>, exchange);
      // What the SDK's stateless JSON transport answers: 200, application/json, the message.
      await reply.code(200).header('content-type', 'application/json').send(JSON.stringify(answer));
      return;
    }
    const webRequest = await toWebRequest(request.raw, body, { signal: exchange.signal });
    this.exchanges.set(webRequest, exchange);
    const response = await this.fetch(webRequest, body);
    reply.code(response.status);
    response.headers.forEach((value, name) => {
      if (name !== 'content-length') reply.header(name, value);
    });
    const streamed = response.headers.get('content-type')?.startsWith('text/event-stream');
    // A JSON answer is sent as text (one write); an SSE answer streams as the SDK produces it.
    await reply.send(streamed ? response.body : await response.text());
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

  /** The SDK's per-request server: handlers and tool list are shared, built once. */
  protected serverFor(_ctx: McpRequestContext): Server {
    const server = new Server({ name: this.options.mcp.name, version: this.options.mcp.version }, { capabilities: { tools: {} } });
    server.setRequestHandler('tools/list', this.listTools);
    server.setRequestHandler('tools/call', this.callTool);
    return server;
  }

  protected listTools(_request: unknown, ctx: ServerContext): { tools: never[] } {
    const { exchange } = this.callerOf(ctx);
    return { tools: this.catalog.list(exchange.roles) as never[] };
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
    return this.runner.call(entry, args, exchange, { format: entry.format ?? this.options.mcp.defaultFormat, id, onRow });
  }

  /** Who is calling: the per-request path's web `Request` names the exchange; the shared path, its id. */
  private callerOf(ctx: ServerContext): McpSharedCall {
    const req = ctx.http?.req;
    const exchange = req ? this.exchanges.get(req) : undefined;
    const caller = exchange ? { exchange, id: ctx.mcpReq.id } : req ? undefined : this.shared.callOf(ctx.mcpReq.id);
    if (!caller) throw new ProtocolError(ProtocolErrorCode.InternalError, 'Internal error');
    return caller;
  }
}

/** A request (or a batch item) whose `_meta` carries a `progressToken`: its answer must stream. */
function asksForProgress(body: unknown): boolean {
  if (Array.isArray(body)) return body.some(asksForProgress);
  const meta = (body as { params?: { _meta?: { progressToken?: unknown } } } | null)?.params?._meta;
  return meta !== null && typeof meta === 'object' && meta.progressToken !== undefined;
}
