import type { Logger } from '@nestjs/common';
import { errorCodes, type FastifyError, type FastifyInstance, type FastifyPluginCallback, type FastifyReply, type FastifyRequest } from 'fastify';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { JSON_RPC_REQUEST_MEDIA_TYPES } from '@nest-jsonrpc/protocol';
import type { HttpPlatform } from '../context/http-platform.js';
import type { RpcHttpExchange } from '../context/rpc-context.js';
import { bodyLimitOf, type BodyBounds } from '../http/body-limit.js';
import { awaitsContinue, BodyArrivalWatch, continueRequest, declaredLength, declaresBody, routeContinueChecks } from '../http/early-answer.js';
import type { HttpEdge, HttpRoute, HttpRouteGroup, RpcExchangeFactory } from '../http/http-edge.js';
import { trackRequestlessConnections } from '../http/requestless-connections.js';
import type { RpcReplyWriter } from '../http/rpc-reply-writer.js';
import type { TransportErrorKind } from '../http/transport-errors.js';

/** What Fastify raised before a route ran, as a kind of the transport-error catalogue. */
function transportErrorKind(error: FastifyError): TransportErrorKind {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return 'tooLarge';
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_TYPE':
      return 'unsupportedMediaType';
  }
  return error.statusCode !== undefined && error.statusCode < 500 ? 'unreadableBody' : 'internal';
}

/**
 * The Fastify adapter of the HTTP edge (`@nestjs/platform-fastify`): the platform port over
 * `FastifyRequest`/`FastifyReply`, and each route group mounted as one encapsulated plugin of the
 * app's own Fastify instance — so the app's hooks (CORS, helmet, Nest middleware) run for the
 * module's routes, while the module's body parser, body bounds and error handler stay inside
 * the plugin and nothing about the app's parsers or error format leaks into its answers:
 *
 * - `json` groups replace the inherited content-type parsers with one that hands over the raw
 *   text of the JSON media types (others: `FST_ERR_CTP_INVALID_MEDIA_TYPE`, 415), so a bad body
 *   is the route's -32700, not Fastify's 400;
 * - a declared `Content-Length` over `maxRequestSize` is refused in the plugin's `onRequest` hook,
 *   before anything is read (any media type, any verb), with Fastify's own
 *   `FST_ERR_CTP_BODY_TOO_LARGE` — the error Fastify raises for a chunked body counted past the
 *   limit — so both reach the plugin's error handler, which answers the catalogue's refusal;
 * - the same hook arms the body timeout, and runs the group's `admit` check.
 */
export class FastifyPlatform implements HttpPlatform<FastifyRequest, FastifyReply>, HttpEdge {
  readonly type = 'fastify';
  private readonly bodyLimit: number;

  constructor(
    private readonly fastify: FastifyInstance,
    private readonly exchanges: RpcExchangeFactory,
    private readonly writer: RpcReplyWriter,
    private readonly options: BodyBounds,
    private readonly logger: Logger,
  ) {
    this.bodyLimit = bodyLimitOf(options.maxRequestSize);
    // Requests that sent `Expect: 100-continue` are told to continue from a root hook, after
    // routing, once their route's body limit has seen the declared length (early-answer.ts).
    if (routeContinueChecks(fastify.server)) {
      // `routeOptions` builds an object per read: only read for a request that is waiting.
      fastify.addHook('onRequest', (request, reply, done) => {
        if (awaitsContinue(request.raw)) continueRequest(request.raw, reply.raw, request.routeOptions.bodyLimit);
        done();
      });
    }
    const closeRequestless = trackRequestlessConnections(fastify.server);
    if (closeRequestless) {
      fastify.addHook('preClose', (done) => {
        closeRequestless();
        done();
      });
    }
  }

  get platform(): this {
    return this;
  }

  rawRequest(request: FastifyRequest): IncomingMessage {
    return request.raw;
  }

  rawResponse(reply: FastifyReply): ServerResponse {
    return reply.raw;
  }

  params(request: FastifyRequest): Readonly<Record<string, string | undefined>> {
    return request.params as Record<string, string | undefined>;
  }

  sent(reply: FastifyReply): boolean {
    return reply.sent;
  }

  send(reply: FastifyReply, status: number, headers: OutgoingHttpHeaders, body?: string | Buffer): void {
    reply.code(status).headers(headers);
    if (body === undefined) reply.send();
    else reply.send(body);
  }

  takeOver(reply: FastifyReply): OutgoingHttpHeaders {
    const headers = reply.getHeaders() as OutgoingHttpHeaders;
    reply.hijack();
    return headers;
  }

  mount(group: HttpRouteGroup): void {
    void this.fastify.register(this.plugin(group));
  }

  private plugin(group: HttpRouteGroup): FastifyPluginCallback {
    const limit = this.bodyLimit;
    const timeoutMs = this.options.limits.bodyTimeoutMs;
    return (instance, _opts, done) => {
      const arrivals = timeoutMs > 0 ? new BodyArrivalWatch<FastifyReply>(timeoutMs, (reply) => this.bodyLate(group, reply.request, reply)) : undefined;
      if (group.body === 'json') {
        instance.removeAllContentTypeParsers();
        instance.addContentTypeParser([...JSON_RPC_REQUEST_MEDIA_TYPES], { parseAs: 'string', bodyLimit: limit }, (_request, body, parsed) => {
          parsed(null, body);
        });
      }
      instance.addHook('onRequest', (request, reply, hookDone) => {
        const headers = request.raw.headers;
        const length = declaredLength(headers);
        if (length > limit) return hookDone(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
        if (arrivals !== undefined && declaresBody(headers, length)) arrivals.watch(request.raw, reply);
        if (group.admit) {
          const exchange = this.exchangeOf(request, reply);
          const refusal = group.admit(exchange);
          // Refused: answered here, and the request goes no further (no `hookDone`).
          if (refusal) return this.writer.sendTransportError(exchange, group.family, refusal.kind, refusal.detail);
        }
        hookDone();
      });
      instance.setErrorHandler((error: FastifyError, request, reply) => {
        const kind = transportErrorKind(error);
        if (kind === 'internal') this.logger.error(`${group.name} ${request.method} ${request.url} failed before its route could answer: ${error.message}`, error.stack);
        this.writer.sendTransportError(this.exchangeOf(request, reply), group.family, kind);
      });
      for (const route of group.routes) this.route(instance, group, route, limit, arrivals);
      if (group.onClose) {
        const onClose = group.onClose;
        instance.addHook('preClose', (hookDone) => {
          Promise.resolve(onClose()).then(() => hookDone(), hookDone);
        });
      }
      done();
    };
  }

  private route(instance: FastifyInstance, group: HttpRouteGroup, route: HttpRoute, bodyLimit: number, arrivals: BodyArrivalWatch<FastifyReply> | undefined): void {
    const { path, handle } = route;
    const withBody = group.body === 'json';
    const handler = (request: FastifyRequest, reply: FastifyReply) => {
      // Fastify reads no body for a GET: one sent anyway to such a route stays watched.
      if (request.raw.complete) arrivals?.arrived(request.raw);
      return handle(this.exchanges.create(this, request, reply, path, withBody ? (request.body as string | undefined) : undefined));
    };
    if (route.method === '*') instance.all(path, { bodyLimit }, handler);
    else instance.route({ method: typeof route.method === 'string' ? route.method : [...route.method], url: path, bodyLimit, exposeHeadRoute: route.head, handler });
  }

  /** The body has not arrived in time: 408 while the request is open; its connection closed once answered. */
  private bodyLate(group: HttpRouteGroup, request: FastifyRequest, reply: FastifyReply): void {
    if (reply.sent || reply.raw.headersSent) return void request.raw.socket.destroy();
    this.writer.sendTransportError(this.exchangeOf(request, reply), group.family, 'bodyTimeout');
  }

  private exchangeOf(request: FastifyRequest, reply: FastifyReply): RpcHttpExchange<FastifyRequest, FastifyReply> {
    return this.exchanges.create(this, request, reply, request.routeOptions.url ?? request.url);
  }
}
