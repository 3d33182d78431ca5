import type { Logger } from '@nestjs/common';
import { errorCodes, type FastifyError, type FastifyInstance, type FastifyPluginCallback, type FastifyReply, type FastifyRequest } from 'fastify';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type { Span } from '@opentelemetry/api';
import { JSON_RPC_REQUEST_MEDIA_TYPES } from '@nest-jsonrpc/protocol';
import type { HttpPlatform } from '../context/http-platform.js';
import type { RpcHttpExchange } from '../context/rpc-context.js';
import { bodyLimitOf, type BodyBounds } from '../http/body-limit.js';
import { awaitsContinue, BodyArrivalWatch, continueRequest, declaredLength, declaresBody, routeContinueChecks, type WatchedBody } from '../http/early-answer.js';
import { INFLATED_UPSTREAM, readBody, requestDecoding, UNSUPPORTED_CODING, type BodyDecoding, type BodyReading } from '../http/request-body.js';
import type { HttpEdge, HttpRoute, HttpRouteGroup, RpcExchangeFactory } from '../http/http-edge.js';
import { trackRequestlessConnections } from '../http/requestless-connections.js';
import type { RpcReplyWriter } from '../http/rpc-reply-writer.js';
import type { TransportErrorKind } from '../http/transport-errors.js';

/** A body that did not arrive within `limits.bodyTimeoutMs`, raised by the module's body reader. */
const BODY_TIMEOUT = 'NEST_JSONRPC_BODY_TIMEOUT';
/** The client went away before its body was complete: nobody reads the answer. */
const BODY_GONE = 'NEST_JSONRPC_BODY_GONE';
/** A `Content-Encoding` the module's reader does not inflate. */
const UNSUPPORTED_ENCODING = 'NEST_JSONRPC_UNSUPPORTED_CONTENT_ENCODING';
/** A compressed body that could not be inflated. */
const UNDECODABLE_BODY = 'NEST_JSONRPC_UNDECODABLE_BODY';
/** `@fastify/compress`'s refusal of a `Content-Encoding` it does not inflate (its request decompression, a `preParsing` hook). */
const COMPRESS_UNSUPPORTED_ENCODING = 'FST_CP_ERR_INVALID_CONTENT_ENCODING';

type ParsedBody = (error: Error | null, body?: string) => void;

/**
 * The body watch of a group with an `onRequest` hook: started by the hook, ended by the route,
 * which do not share a scope — the link goes from one to the other through a `WeakMap`.
 */
class HookedBodyWatch {
  private readonly links = new WeakMap<IncomingMessage, WatchedBody<FastifyReply>>();

  constructor(private readonly arrivals: BodyArrivalWatch<FastifyReply>) {}

  watch(req: IncomingMessage, reply: FastifyReply): void {
    this.links.set(req, this.arrivals.watch(req, reply));
  }

  arrived(req: IncomingMessage): void {
    this.arrivals.arrived(this.links.get(req));
  }
}

/** The little of `@fastify/otel`'s request decoration (`request.opentelemetry()`, its public API) read here. */
interface FastifyOtelRequest {
  opentelemetry?: () => { readonly span?: Pick<Span, 'isRecording' | 'setAttribute' | 'setStatus' | 'end'> | null };
}

/** `SpanStatusCode.ERROR`: `@opentelemetry/api` is an optional peer, imported for its types only. */
const SPAN_STATUS_ERROR = 2;

/**
 * `@fastify/otel` ends its `request` span in an `onResponse` hook, and Fastify runs `onResponse`
 * for a hijacked reply only once the response finished (its listener waits for `finish` or
 * `error`, neither of which comes when the client leaves first): a client that leaves a stream
 * would leave the span open, never exported. So when the hijacked response closes unfinished, the
 * span is ended here as that hook ends it — the status code sent, status unset (a client leaving
 * is not the server failing; instrumentation-http's server span says the same), ERROR for a 5xx.
 * A response that finished is left to the hook. Nothing happens without `@fastify/otel`.
 */
function endOtelRequestSpanIfLeft(reply: FastifyReply): void {
  const request = reply.request as FastifyRequest & FastifyOtelRequest;
  if (typeof request.opentelemetry !== 'function') return;
  const res = reply.raw;
  res.once('close', () => {
    if (res.writableFinished) return;
    const span = request.opentelemetry?.().span;
    if (!span?.isRecording()) return;
    span.setAttribute('http.response.status_code', res.statusCode);
    if (res.statusCode >= 500) span.setStatus({ code: SPAN_STATUS_ERROR });
    span.end();
  });
}

/** What Fastify (or the module's body reader) raised before a route ran, as a kind of the transport-error catalogue. */
function transportErrorKind(error: FastifyError): TransportErrorKind {
  switch (error.code) {
    case BODY_TIMEOUT:
      return 'bodyTimeout';
    case BODY_GONE:
      return 'unreadableBody';
    case UNSUPPORTED_ENCODING:
    case COMPRESS_UNSUPPORTED_ENCODING:
      return 'unsupportedContentEncoding';
    case UNDECODABLE_BODY:
      return 'undecodableBody';
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return 'tooLarge';
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_TYPE':
      return 'unsupportedMediaType';
  }
  return error.statusCode !== undefined && error.statusCode < 500 ? 'unreadableBody' : 'internal';
}

/** The error a body reading that did not end with its text hands Fastify, for the plugin's error handler. */
function readingError(reading: Exclude<BodyReading, { readonly text: string }>): Error {
  if ('tooLarge' in reading) return new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE();
  if ('undecodable' in reading) return Object.assign(new Error('The request body could not be inflated'), { code: UNDECODABLE_BODY, statusCode: 400 });
  return Object.assign(new Error('The client went away before its body was complete'), { code: BODY_GONE, statusCode: 400 });
}

/**
 * How the module's parser reads the body of a request that has a `Content-Encoding`: a request
 * that declares no body has nothing to inflate (as on Express, where it never reaches the reader);
 * a body a `preParsing` hook already inflates (`@fastify/compress`, which leaves the header as it
 * was) is read as it comes, never inflated twice; any other is inflated by the module's reader.
 */
function decodingOf(encoding: string, req: IncomingMessage, payload: Readable): BodyDecoding | undefined | typeof UNSUPPORTED_CODING {
  if (!declaresBody(req.headers)) return undefined;
  if (payload !== req && typeof (payload as Readable & { receivedEncodedLength?: unknown }).receivedEncodedLength === 'number') return INFLATED_UPSTREAM;
  return requestDecoding(encoding);
}

/**
 * The Fastify adapter of the HTTP edge (`@nestjs/platform-fastify`): the platform port over
 * `FastifyRequest`/`FastifyReply`, and each route group mounted as one encapsulated plugin of the
 * app's own Fastify instance — so the app's hooks (CORS, helmet, Nest middleware) run for the
 * module's routes, while the module's body parser, body bounds and error handler stay inside
 * the plugin and nothing about the app's parsers or error format leaks into its answers:
 *
 * - `json` groups replace the inherited content-type parsers with the module's body reader, which
 *   hands over the text of the JSON media types (others: `FST_ERR_CTP_INVALID_MEDIA_TYPE`, 415),
 *   inflated when it has a `Content-Encoding` as on Express, so a bad body is the route's -32700,
 *   not Fastify's 400;
 * - a declared `Content-Length` over `maxRequestSize` is refused before anything is read (any
 *   media type, any verb), with Fastify's own `FST_ERR_CTP_BODY_TOO_LARGE` — the error Fastify
 *   raises for a chunked body counted past the limit — so both reach the plugin's error handler,
 *   which answers the catalogue's refusal (and a 415 whose declared length is over the limit
 *   too is answered 413, as the size refusal comes first on every route);
 * - the body timeout is armed before the body is read, and the group's `admit` check runs then.
 *
 * Where that happens: a `json` group without an `admit` check (`/rpc`, `/rpc/stream`) has no
 * `onRequest` hook — its parser reads the body itself (`http/request-body.ts`), refusing a
 * declared length over the limit and arming the timeout first, and its routes refuse an oversize
 * declared length on the verbs Fastify parses no body for. A hook would run for every request
 * (bench/README.md, "Side by side, and the hooks of the hot path"). Other groups do it in the plugin's `onRequest` hook,
 * and their parser only reads.
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
    endOtelRequestSpanIfLeft(reply);
    return headers;
  }

  mount(group: HttpRouteGroup): void {
    void this.fastify.register(this.plugin(group));
  }

  private plugin(group: HttpRouteGroup): FastifyPluginCallback {
    const limit = this.bodyLimit;
    const timeoutMs = this.options.limits.bodyTimeoutMs;
    const plugin: FastifyPluginCallback = (instance, _opts, done) => {
      const readsInParser = group.body === 'json' && group.admit === undefined;
      const late = timeoutMs > 0 ? new BodyArrivalWatch<FastifyReply>(timeoutMs, (reply) => this.bodyLate(group, reply.request, reply)) : undefined;
      const arrivals = late && !readsInParser ? new HookedBodyWatch(late) : undefined;
      if (group.body === 'json') {
        instance.removeAllContentTypeParsers();
        // The module's reader on every group (Fastify's own would read a compressed body as sent);
        // a group with a hook has its body timeout armed there.
        instance.addContentTypeParser([...JSON_RPC_REQUEST_MEDIA_TYPES], this.bodyReader(limit, readsInParser ? timeoutMs : 0));
      }
      if (!readsInParser) this.addEarlyChecks(instance, group, limit, arrivals);
      instance.setErrorHandler((error: FastifyError, request, reply) => {
        let kind = transportErrorKind(error);
        if (kind === 'unsupportedMediaType' && declaredLength(request.raw.headers) > limit) kind = 'tooLarge';
        if (kind === 'internal') this.logger.error(`${group.name} ${request.method} ${request.url} failed before its route could answer: ${error.message}`, error.stack);
        this.writer.sendTransportError(this.exchangeOf(request, reply), group.family, kind);
      });
      for (const route of group.routes) this.route(instance, group, route, limit, arrivals, readsInParser ? { unread: late } : undefined);
      if (group.onClose) {
        const onClose = group.onClose;
        instance.addHook('preClose', (hookDone) => {
          Promise.resolve(onClose()).then(() => hookDone(), hookDone);
        });
      }
      done();
    };
    // Fastify names an anonymous plugin by the first lines of its source, and that name shows up
    // wherever plugins are named: `printPlugins()`, avvio's timeout errors, and the span names and
    // `hook.name` attributes of @fastify/otel. This one is named by the module and its first route.
    return Object.assign(plugin, { [Symbol.for('fastify.display-name')]: `@nest-jsonrpc/server ${group.routes[0]?.path ?? group.name}` });
  }

  /** The group's `onRequest` hook: the size refusal, the body timeout, the `admit` check. */
  private addEarlyChecks(instance: FastifyInstance, group: HttpRouteGroup, limit: number, arrivals: HookedBodyWatch | undefined): void {
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
  }

  /**
   * The parser of a `json` group: a declared length over `limit` is refused before anything is
   * read; the body is read as text under `limit`, inflated first when it has a `Content-Encoding`
   * (`http/request-body.ts`; 415 for a coding it does not inflate), and — in a group without a
   * hook (`timeoutMs` above 0) — within `timeoutMs` (one clock for all the group's requests,
   * `BodyArrivalWatch`). What it cannot read goes to the plugin's error handler, as Fastify's own
   * parser errors do (and Fastify closes the connection after each: `Connection: close`).
   */
  private bodyReader(limit: number, timeoutMs: number): (request: FastifyRequest, payload: Readable, parsed: ParsedBody) => void {
    const arrivals = timeoutMs > 0 ? new BodyArrivalWatch<ParsedBody>(timeoutMs, (late) => late(Object.assign(new Error('The request body did not arrive in time'), { code: BODY_TIMEOUT }))) : undefined;
    return (request, payload, parsed) => {
      const req = request.raw;
      const headers = req.headers;
      if (declaredLength(headers) > limit) return parsed(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
      // The one header read an uncompressed request pays.
      const encoding = headers['content-encoding'];
      let decoding: BodyDecoding | undefined;
      if (encoding !== undefined) {
        const decoded = decodingOf(encoding, req, payload);
        if (decoded === UNSUPPORTED_CODING) return parsed(Object.assign(new Error(`Unsupported Content-Encoding: ${encoding}`), { code: UNSUPPORTED_ENCODING, statusCode: 415 }));
        decoding = decoded;
      }
      let settled = false;
      // Once: a late body is answered at its deadline, and the reading that ends afterwards is not.
      const settle: ParsedBody = (error, body) => {
        if (settled) return;
        settled = true;
        parsed(error, body);
      };
      const watched = arrivals?.watch(req, settle);
      readBody(
        payload,
        limit,
        (reading) => {
          arrivals?.arrived(watched);
          if ('text' in reading) return settle(null, reading.text);
          // A hook's inflating stream is piped from the request and now paused: the pipe would
          // hold the request back from the 413's lingering read until `limits.lingerMs`.
          if (decoding === INFLATED_UPSTREAM) req.unpipe();
          settle(readingError(reading));
        },
        decoding,
      );
    };
  }

  private route(
    instance: FastifyInstance,
    group: HttpRouteGroup,
    route: HttpRoute,
    bodyLimit: number,
    arrivals: HookedBodyWatch | undefined,
    /** A group without a hook: what its parser did not see (a GET's body) is bounded here; `unread` watches it. */
    parserChecks: { readonly unread: BodyArrivalWatch<FastifyReply> | undefined } | undefined,
  ): void {
    const { path, handle } = route;
    const withBody = group.body === 'json';
    const handler = (request: FastifyRequest, reply: FastifyReply) => {
      const body = withBody ? (request.body as string | undefined) : undefined;
      if (parserChecks !== undefined && body === undefined) {
        // No body parsed (a GET, or a DELETE without a media type): its declared length is still
        // bounded, and one sent anyway is held to the body timeout (its route does not read it).
        const headers = request.raw.headers;
        const length = declaredLength(headers);
        if (length > bodyLimit) return this.writer.sendTransportError(this.exchangeOf(request, reply), group.family, 'tooLarge');
        if (parserChecks.unread !== undefined && declaresBody(headers, length) && !request.raw.complete) parserChecks.unread.watch(request.raw, reply);
      }
      // Fastify reads no body for a GET: one sent anyway to such a route stays watched.
      if (request.raw.complete) arrivals?.arrived(request.raw);
      return handle(this.exchanges.create(this, request, reply, path, body));
    };
    // @fastify/otel names the handler's span after the function (`handler - <name>`), as Nest's own
    // routes read `handler - AppController.getHello`: say whose route this is.
    const verbs = route.method === '*' ? 'ALL' : typeof route.method === 'string' ? route.method : route.method.join(',');
    Object.defineProperty(handler, 'name', { value: `@nest-jsonrpc/server ${verbs} ${path}` });
    if (route.method === '*') instance.all(path, { bodyLimit }, handler);
    else instance.route({ method: typeof route.method === 'string' ? route.method : [...route.method], url: path, bodyLimit, handler });
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
