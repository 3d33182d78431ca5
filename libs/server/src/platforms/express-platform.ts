import type { Logger } from '@nestjs/common';
import express, { type Express, type NextFunction, type Request, type Response, type Router } from 'express';
import type { IncomingMessage, OutgoingHttpHeaders, Server, ServerResponse } from 'node:http';
import { JSON_RPC_REQUEST_MEDIA_TYPES } from '@nest-jsonrpc/protocol';
import type { HttpPlatform } from '../context/http-platform.js';
import type { RpcHttpExchange } from '../context/rpc-context.js';
import { bodyLimitOf, type BodyBounds } from '../http/body-limit.js';
import { awaitsContinue, BodyArrivalWatch, continueRequest, declaredLength, declaresBody, isJsonRpcMediaType, routeContinueChecks } from '../http/early-answer.js';
import type { HttpEdge, HttpRoute, HttpRouteGroup, RpcExchangeFactory } from '../http/http-edge.js';
import { readRequestBody, requestDecoding, UNSUPPORTED_CODING, type Inflater } from '../http/request-body.js';
import { trackRequestlessConnections } from '../http/requestless-connections.js';
import type { RpcReplyWriter } from '../http/rpc-reply-writer.js';
import type { TransportErrorDetail, TransportErrorKind } from '../http/transport-errors.js';

/**
 * body-parser's middleware, by name: Express's `express.json()`/`.urlencoded()`/`.text()`/
 * `.raw()`, what Nest's `bodyParser` option and `app.useBodyParser()` mount, body-parser 1.x.
 */
const BODY_PARSERS: ReadonlySet<string> = new Set(['jsonParser', 'urlencodedParser', 'textParser', 'rawParser']);

/** A layer of an Express 5 router stack: a middleware, a route, or a mounted router / app. */
interface StackLayer {
  readonly name?: string;
  readonly handle?: { readonly stack?: readonly StackLayer[]; readonly router?: { readonly stack?: readonly StackLayer[] } };
}

/** Whether a layer reads request bodies: a body parser, or a router or sub-app that mounts one. */
function readsBodies(layer: StackLayer): boolean {
  if (layer.name !== undefined && BODY_PARSERS.has(layer.name)) return true;
  const inner = layer.handle?.stack ?? layer.handle?.router?.stack;
  return Array.isArray(inner) && inner.some(readsBodies);
}

/** The body a route gets: its text (undefined: none was sent), or nothing because it was refused. */
type Claim = { readonly text: string | undefined } | typeof REFUSED;
const REFUSED = Symbol('refused');
const NO_BODY: Claim = Object.freeze({ text: undefined });

type Verb = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** A route as the adapter serves it: its group, and the clock of its bodies' arrival (`limits.bodyTimeoutMs`). */
interface ServedRoute {
  readonly group: HttpRouteGroup;
  readonly route: HttpRoute;
  readonly arrivals: BodyArrivalWatch<Response> | undefined;
}

/** Out of the module's router, on along the app's stack. */
const leaveRouter = (_req: Request, _res: Response, next: NextFunction): void => next('router');

/**
 * The JSON text of what a body parser left on `req.body`: `express.text()`'s string,
 * `express.raw()`'s bytes, `express.json()`'s value (written back to text, which the module
 * parses under its own depth and prototype rules). Undefined when it left nothing.
 */
function parsedBodyText(body: unknown): string | undefined {
  if (body === undefined) return undefined;
  if (typeof body === 'string') return body;
  if (Buffer.isBuffer(body)) return body.toString('utf8');
  try {
    return JSON.stringify(body);
  } catch {
    return undefined;
  }
}

function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as Promise<T> | undefined)?.then === 'function';
}

/** A route path in Express 5's syntax: `/*` (everything below) becomes a named wildcard. */
function expressPath(path: string): string {
  return path.endsWith('/*') ? `${path.slice(0, -1)}*rest` : path;
}

/**
 * The Express adapter of the HTTP edge (`@nestjs/platform-express` 12, Express 5): the platform
 * port over Express's `Request`/`Response` (Node's own request and response, extended), and the
 * route groups mounted as one router at the end of the app's stack — after its middleware and
 * Nest's controllers — so `app.use()` middleware, `app.enableCors()`, Passport and Nest middleware
 * run for the module's routes as on a controller.
 *
 * Express reads no body by itself; Nest mounts `express.json()` and `express.urlencoded()` for the
 * whole app (unless `bodyParser: false`), and apps add their own. The module reads its routes'
 * bodies itself, under its own bounds (`maxRequestSize` with the lingering 413,
 * `limits.bodyTimeoutMs`, JSON media types only, -32700 on bad JSON): when the app's stack has a
 * body parser, a small router of the module is placed just before the first one, and claims the
 * bodies of the module's routes there — the parsers then skip a request whose body has been read.
 * Everything the app mounted before its parsers (CORS, security headers, sessions) has run by
 * then, so the module's refusals carry their headers as on Fastify. A body something else read
 * first (a parser the module cannot see: wrapped in the app's own function, or applied by a Nest
 * middleware consumer to every route) is served from what that parser left on `req.body`, and the
 * cause logged; never silently as an empty body.
 */
export class ExpressPlatform implements HttpPlatform<Request, Response>, HttpEdge {
  readonly type = 'express';
  private readonly routes: Router;
  private readonly claims: Router | undefined;
  /** Bodies claimed before the app's parsers, for the route handler. */
  private readonly claimed = new WeakMap<IncomingMessage, Claim | Promise<Claim>>();
  private readonly closers: Array<() => void | Promise<void>> = [];
  /** The module's paths, for the one decision taken before routing: `100 Continue`. */
  private readonly ownPaths: RegExp[] = [];
  private readonly bodyLimit: number;
  private readonly caseSensitive: boolean;
  private readonly strict: boolean;
  private warnedConsumed = false;

  constructor(
    app: Express,
    server: Server | undefined,
    private readonly exchanges: RpcExchangeFactory,
    private readonly writer: RpcReplyWriter,
    private readonly options: BodyBounds,
    private readonly logger: Logger,
  ) {
    this.bodyLimit = bodyLimitOf(options.maxRequestSize);
    // The module's routers match paths as the app's router does.
    this.caseSensitive = Boolean(app.get('case sensitive routing'));
    this.strict = Boolean(app.get('strict routing'));
    const routerOptions = { caseSensitive: this.caseSensitive, strict: this.strict };
    const stack = (app as unknown as { router?: { stack?: StackLayer[] } }).router?.stack;
    if (!Array.isArray(stack)) {
      throw new Error('JsonRpcModule: this Express app has no router stack to mount on (the module needs Express 5, as @nestjs/platform-express 12 brings)');
    }
    this.routes = express.Router(routerOptions);
    app.use(this.routes);
    const firstParser = stack.findIndex(readsBodies);
    if (firstParser >= 0 && firstParser < stack.length - 1) {
      this.claims = express.Router(routerOptions);
      app.use(this.claims);
      stack.splice(firstParser, 0, stack.pop()!);
    }
    if (server) this.watchServer(app, stack, server);
  }

  get platform(): this {
    return this;
  }

  rawRequest(request: Request): IncomingMessage {
    return request;
  }

  rawResponse(reply: Response): ServerResponse {
    return reply;
  }

  params(request: Request): Readonly<Record<string, string | undefined>> {
    return request.params as Record<string, string | undefined>;
  }

  sent(reply: Response): boolean {
    return reply.headersSent;
  }

  send(reply: Response, status: number, headers: OutgoingHttpHeaders, body?: string | Buffer): void {
    // The length, as Fastify sends it: after writeHead() without one, Node frames the body as
    // chunked, and a HEAD answer would not say how long the GET's is.
    if (status !== 204 && status !== 304) reply.setHeader('content-length', body === undefined ? 0 : typeof body === 'string' ? Buffer.byteLength(body) : body.length);
    // Headers the app's middleware set with `res.setHeader` (CORS...) are merged in by Node.
    reply.writeHead(status, headers);
    reply.end(body);
  }

  takeOver(): OutgoingHttpHeaders {
    // Nothing to take: the Express response is the Node one, with the middleware's headers on it.
    return {};
  }

  mount(group: HttpRouteGroup): void {
    const timeoutMs = this.options.limits.bodyTimeoutMs;
    for (const route of group.routes) {
      const path = expressPath(route.path);
      this.ownPaths.push(this.pathPattern(route.path));
      const served: ServedRoute = {
        group,
        route,
        arrivals: timeoutMs > 0 ? new BodyArrivalWatch<Response>(timeoutMs, (res) => this.bodyLate(group, route, res.req, res)) : undefined,
      };
      this.register(this.routes, route, path, (req, res) => this.serve(served, req, res));
      if (this.claims) this.register(this.claims, route, path, (req, res, next) => this.claimEarly(served, req, res, next));
    }
    if (group.onClose) this.closers.push(group.onClose);
  }

  private register(router: Router, route: HttpRoute, path: string, handler: (req: Request, res: Response, next: NextFunction) => void): void {
    if (route.method === '*') {
      router.all(path, handler);
      return;
    }
    const methods = typeof route.method === 'string' ? [route.method] : route.method;
    const chain = router.route(path);
    for (const method of methods) chain[method.toLowerCase() as Verb](handler);
    // Express's router answers an OPTIONS request no route of it serves with the verbs of the
    // routes at its path (200, `Allow`); the module answers no OPTIONS (as on Fastify), so it goes
    // on to the app: its CORS middleware, its own routes or Nest's 404.
    chain.options(leaveRouter);
  }

  /** The route's handler: its exchange, with the body claimed before the parsers or read now. */
  private serve(served: ServedRoute, req: Request, res: Response): void {
    const { group, route } = served;
    const claim = this.claimed.get(req) ?? this.claim(served, req, res);
    if (isPromise(claim)) void claim.then((settled) => this.run(group, route, req, res, settled));
    else this.run(group, route, req, res, claim);
  }

  private run(group: HttpRouteGroup, route: HttpRoute, req: Request, res: Response, claim: Claim): void {
    if (claim === REFUSED) return;
    const exchange = this.exchanges.create(this, req, res, route.path, claim.text);
    try {
      const done = route.handle(exchange);
      if (isPromise(done)) done.then(undefined, (error: unknown) => this.failed(group, exchange, error));
    } catch (error) {
      this.failed(group, exchange, error);
    }
  }

  /** A route that threw: logged, and answered 500 in its family's shape. */
  private failed(group: HttpRouteGroup, exchange: RpcHttpExchange<Request, Response>, error: unknown): void {
    const err = error instanceof Error ? error : new Error(String(error));
    this.logger.error(`${group.name} ${exchange.request.method} ${exchange.request.originalUrl} failed: ${err.message}`, err.stack);
    this.writer.sendTransportError(exchange, group.family, 'internal');
  }

  /** Before the app's parsers: the body is read (or the request refused) now, then the stack goes on. */
  private claimEarly(served: ServedRoute, req: Request, res: Response, next: NextFunction): void {
    const claim = this.claim(served, req, res);
    this.claimed.set(req, claim);
    // Out of the module's claim router, on along the app's stack (a refused request stops here).
    if (!isPromise(claim)) return claim === REFUSED ? undefined : next('router');
    void claim.then((settled) => {
      this.claimed.set(req, settled);
      if (settled !== REFUSED) next('router');
    });
  }

  /**
   * The body bounds of every route of the module, in Fastify's order: a declared length over the
   * limit, the group's check (MCP's host check), the media type, the content coding, the body read
   * (inflated when it has a `Content-Encoding`; drained as sent, for routes that read none) under
   * the limit and within the body timeout.
   */
  private claim({ group, route, arrivals }: ServedRoute, req: Request, res: Response): Claim | Promise<Claim> {
    const limit = this.bodyLimit;
    if (declaredLength(req.headers) > limit) return this.refuse(group, route, req, res, 'tooLarge');
    if (group.admit) {
      const refusal = group.admit(this.exchanges.create(this, req, res, route.path));
      if (refusal) return this.refuse(group, route, req, res, refusal.kind, refusal.detail);
    }
    if (!declaresBody(req.headers)) {
      // `Content-Length: 0` with a `Content-Encoding`: body-parser, next in the app's stack, would
      // try to inflate nothing and answer its own 400. Read to its end, the request is one the
      // parsers skip, and the route answers an empty body as it does without a coding.
      return req.headers['content-encoding'] === undefined ? NO_BODY : readRequestBody(req, limit).then(() => NO_BODY);
    }
    const readsJson = group.body === 'json';
    if (readsJson && !isJsonRpcMediaType(req.headers['content-type'], JSON_RPC_REQUEST_MEDIA_TYPES)) {
      return this.refuse(group, route, req, res, 'unsupportedMediaType');
    }
    if (req.readableDidRead || req.readableEnded) return this.readElsewhere(group, route, req, res);
    let decoding: Inflater | undefined;
    if (readsJson) {
      // The one header read an uncompressed request pays.
      const encoding = req.headers['content-encoding'];
      if (encoding !== undefined) {
        const decoded = requestDecoding(encoding);
        if (decoded === UNSUPPORTED_CODING) return this.refuse(group, route, req, res, 'unsupportedContentEncoding');
        decoding = decoded;
      }
    }
    continueRequest(req, res, limit);
    const watched = arrivals?.watch(req, res);
    // A Promise, not `readBody`'s callback: a Promise's reaction runs in the async context where
    // the claim began (under the app's HTTP span, `@opentelemetry/instrumentation-express`), a
    // listener of the body's `end` in the socket's — the calls' spans would lose their parent
    // (test/observability/parents.e2e-spec.ts fails).
    return readRequestBody(req, limit, decoding).then((reading): Claim => {
      if ('tooLarge' in reading) return this.refuse(group, route, req, res, 'tooLarge');
      if ('undecodable' in reading) return this.refuse(group, route, req, res, 'undecodableBody');
      if ('gone' in reading) return REFUSED;
      arrivals?.arrived(watched);
      if (!readsJson) return NO_BODY;
      // As on Fastify, where `request.body` is the text the module's parser handed over.
      (req as { body?: unknown }).body = reading.text;
      return { text: reading.text };
    });
  }

  /** Answers a refusal of the catalogue in the group's shape; the route does not run. */
  private refuse(group: HttpRouteGroup, route: HttpRoute, req: Request, res: Response, kind: TransportErrorKind, detail?: TransportErrorDetail): Claim {
    this.writer.sendTransportError(this.exchanges.create(this, req, res, route.path), group.family, kind, detail);
    return REFUSED;
  }

  /**
   * Something read the body before the module could — a parser it does not recognise: one wrapped
   * in a function of the app's own, or one a Nest middleware consumer applies to every route. What
   * that parser left on `req.body` is served (its limits and its refusals apply, not the module's),
   * and the log says once what to change; with nothing left there the request is answered 500,
   * never as empty params.
   */
  private readElsewhere(group: HttpRouteGroup, route: HttpRoute, req: Request, res: Response): Claim {
    const text = parsedBodyText((req as { body?: unknown }).body);
    if (!this.warnedConsumed) {
      this.warnedConsumed = true;
      const outcome =
        text === undefined
          ? 'and left nothing the module can serve, so the request was answered 500 (never with empty params)'
          : "and the module serves what it left on req.body: that parser's size limit and error answers apply to the module's routes, not maxRequestSize and -32700";
      this.logger.warn(
        `The body of ${req.method} ${req.originalUrl} was read before JsonRpcModule could read it, by a body parser the module does not recognise, ${outcome}. ` +
          "To have the module read its routes' bodies itself: mount body parsers as they are (app.use(express.json()), app.useBodyParser() or Nest's bodyParser option; " +
          "the module reads its bodies before those), not wrapped in a function of your own, or leave the module's paths out of the middleware that reads them " +
          '(MiddlewareConsumer.exclude(), or a path check in the wrapper).',
      );
    }
    if (text === undefined) return this.refuse(group, route, req, res, 'internal');
    if (group.body !== 'json') return NO_BODY;
    if (Buffer.byteLength(text) > this.bodyLimit) return this.refuse(group, route, req, res, 'tooLarge');
    return { text };
  }

  /** The body has not arrived in time: 408 while the request is open; its connection closed once answered. */
  private bodyLate(group: HttpRouteGroup, route: HttpRoute, req: Request, res: Response): void {
    if (res.headersSent) return void req.socket.destroy();
    this.writer.sendTransportError(this.exchanges.create(this, req, res, route.path), group.family, 'bodyTimeout');
  }

  /**
   * `100 Continue` before routing, as Fastify's root hook sends it: every request that asked is
   * told to continue at the front of the stack, except one to the module's routes whose declared
   * length is over `maxRequestSize` — its 413 comes instead, and its body is never sent. Closing:
   * Express has no close hook, so the server's `close()` (what Nest's adapter calls) first ends
   * what would keep it open — open streams, attached responses, connections that never sent a
   * request — as Fastify's `preClose` hooks do.
   */
  private watchServer(app: Express, stack: StackLayer[], server: Server): void {
    if (routeContinueChecks(server)) {
      // It runs for every request of the app: the module's paths are matched only for one waiting.
      app.use((req: Request, res: Response, next: NextFunction) => {
        if (awaitsContinue(req)) continueRequest(req, res, this.owns(req) ? this.bodyLimit : Number.POSITIVE_INFINITY);
        next();
      });
      stack.unshift(stack.pop()!);
    }
    const closeRequestless = trackRequestlessConnections(server);
    const close = server.close.bind(server);
    server.close = ((callback?: (error?: Error) => void) => {
      void Promise.allSettled(this.closers.map((closer) => closer())).then(() => {
        closeRequestless?.();
        close(callback);
      });
      return server;
    }) as Server['close'];
  }

  /** Whether the path of `req` is one of the module's routes. */
  private owns(req: IncomingMessage): boolean {
    const url = req.url ?? '';
    const mark = url.indexOf('?');
    const path = mark < 0 ? url : url.slice(0, mark);
    return this.ownPaths.some((pattern) => pattern.test(path));
  }

  private pathPattern(path: string): RegExp {
    const escape = (segment: string) => segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    let source = path
      .split('/')
      .map((segment) => (segment === '*' ? '.*' : segment.startsWith(':') ? '[^/]+' : escape(segment)))
      .join('/');
    if (!this.strict) source += '/?';
    return new RegExp(`^${source}$`, this.caseSensitive ? '' : 'i');
  }
}
