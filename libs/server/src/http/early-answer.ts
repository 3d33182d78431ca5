import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, Server, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks'; // the global `performance` is a getter, run on every read
import type { ResolvedLimitsOptions } from '../options/limits-options.js';

/**
 * Answering a request before its body has been read — 413 for a body over the limit, 415 for a
 * media type we do not parse — and still having the client read the answer.
 *
 * Node closes a `Connection: close` response's socket as soon as the answer is written. Bytes
 * of the upload still arriving then meet a closed socket, the kernel answers them with a reset,
 * and a client still sending (Node's `fetch`, `node:http`, most HTTP libraries) reports
 * `EPIPE`/`ECONNRESET` instead of the 413 it was sent. Neither Node nor Fastify nor Express has a
 * lingering close, so this file is one, as nginx does it (`lingering_close`): the answer goes out
 * at once, the rest of the upload is read and thrown away, and the response ends (closing the
 * socket) when the upload is complete, or after `limits.lingerMs`, or past `limits.lingerBytes`,
 * whichever comes first — a client that keeps sending cannot hold the connection longer than that.
 *
 * `Expect: 100-continue`: Node answers `100 Continue` before any route code runs unless the
 * server has a `checkContinue` listener. With {@link routeContinueChecks} the route's own body
 * limit decides first: a declared length over it gets its 413 and the body is never sent; every
 * other request is told to continue by the platform adapter (a root hook, or the first
 * middleware) with {@link continueRequest}, so every route keeps working.
 *
 * Everything here is Node's request and response: the platform adapters call it.
 */

/** Requests that sent `Expect: 100-continue` and have not been told to continue. */
const awaitingContinue = new WeakSet<IncomingMessage>();
const INSTALLED = Symbol.for('nest-jsonrpc.expect-continue');

/** The `Content-Length` the client declared (NaN when there is none: chunked, or no body). */
export function declaredLength(headers: IncomingHttpHeaders): number {
  const header = headers['content-length'];
  return header === undefined ? Number.NaN : Number(header);
}

/** Whether the request declares a body: a length above 0, or chunked. */
export function declaresBody(headers: IncomingHttpHeaders, length = declaredLength(headers)): boolean {
  return length > 0 || headers['transfer-encoding'] !== undefined;
}

/**
 * Whether body bytes of `req` may still be on their way: it declared a body (a length, or
 * chunked) that has not been read to its end. A request without a body is not complete yet while
 * its route runs (Node marks it so right after), but has nothing more to send.
 */
export function bodyStillArriving(req: IncomingMessage): boolean {
  if (req.complete) return false;
  return declaresBody(req.headers);
}

/**
 * Hands `Expect: 100-continue` requests to the server's request handler without Node's automatic
 * `100 Continue`, so a route's body limit sees them before their body is sent. Once per server;
 * `true` when this call installed it (the adapter then adds its own hook that continues them).
 */
export function routeContinueChecks(server: Server): boolean {
  const marked = server as Server & { [INSTALLED]?: true };
  if (marked[INSTALLED] || typeof server.on !== 'function') return false;
  marked[INSTALLED] = true;
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    awaitingContinue.add(req);
    server.emit('request', req, res);
  });
  return true;
}

/** Whether `req` asked for `100 Continue` and has not been told to continue yet (one `WeakSet` lookup). */
export function awaitsContinue(req: IncomingMessage): boolean {
  return awaitingContinue.has(req);
}

/** Sends `100 Continue` to a request still waiting for it, unless its declared length is over `limit`. */
export function continueRequest(req: IncomingMessage, res: ServerResponse, limit: number): void {
  if (!awaitingContinue.has(req) || declaredLength(req.headers) > limit) return;
  awaitingContinue.delete(req);
  if (!req.socket.destroyed) res.writeContinue();
}

/** How often, at most, the body watch looks for requests that went away before their body arrived. */
const SWEEP_MS = 1_000;

/** A request under {@link BodyArrivalWatch}: a link of its list, which the caller holds until the body arrives. */
export class WatchedBody<T> {
  prev: WatchedBody<T> | undefined;
  next: WatchedBody<T> | undefined;
  watched = true;

  constructor(
    readonly req: IncomingMessage,
    readonly due: number,
    readonly subject: T,
  ) {}
}

/**
 * Bounds how long request bodies may take to arrive: `onLate(subject)` runs for a request whose
 * body has not arrived `timeoutMs` after {@link watch} (while the request is still open).
 *
 * One clock for all the requests of a route group, not a timer and a listener per request: a
 * request costs one link of a list, unlinked by {@link arrived} when its body is read. A list the
 * caller holds the links of, rather than a `Map` keyed by request: no hash to give each request,
 * and no table that grows and shrinks as requests come and go (bench/README.md, "Side by side,
 * and the hooks of the hot path"). One unreferenced timer runs while anything is watched: at the
 * earliest deadline (every timeout is the same, so the list's order is deadline order), and at
 * least every second, to drop requests that completed or went away without saying so (a refused
 * or aborted upload).
 * A late body is answered at its deadline, as with a timer of its own.
 */
export class BodyArrivalWatch<T> {
  private head: WatchedBody<T> | undefined;
  private tail: WatchedBody<T> | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly timeoutMs: number,
    private readonly onLate: (subject: T) => void,
  ) {}

  /** Starts the clock of `req`'s body; `subject` is what `onLate` gets if it is late. Hand the link to {@link arrived}. */
  watch(req: IncomingMessage, subject: T): WatchedBody<T> {
    const link = new WatchedBody(req, performance.now() + this.timeoutMs, subject);
    link.prev = this.tail;
    if (this.tail === undefined) this.head = link;
    else this.tail.next = link;
    this.tail = link;
    if (this.timer === undefined) this.arm(Math.min(this.timeoutMs, SWEEP_MS));
    return link;
  }

  /** The body has arrived (or the request is answered): nothing more to watch. Once is enough; later calls do nothing. */
  arrived(link: WatchedBody<T> | undefined): void {
    if (link?.watched) this.unlink(link);
  }

  private unlink(link: WatchedBody<T>): void {
    link.watched = false;
    if (link.prev === undefined) this.head = link.next;
    else link.prev.next = link.next;
    if (link.next === undefined) this.tail = link.prev;
    else link.next.prev = link.prev;
    link.prev = link.next = undefined;
  }

  private arm(delayMs: number): void {
    this.timer = setTimeout(() => this.check(), Math.max(1, delayMs));
    this.timer.unref();
  }

  private check(): void {
    this.timer = undefined;
    const now = performance.now();
    let next = Number.POSITIVE_INFINITY;
    const late: T[] = [];
    for (let link = this.head; link !== undefined; ) {
      const following = link.next;
      if (link.req.complete || link.req.destroyed) this.unlink(link);
      else if (link.due <= now) {
        this.unlink(link);
        late.push(link.subject);
      } else if (link.due < next) next = link.due;
      link = following;
    }
    if (this.head !== undefined) this.arm(Math.min(next - now, SWEEP_MS));
    for (const subject of late) this.onLate(subject);
  }
}

/** Headers HTTP/2 forbids (RFC 9113, 8.2.2); Node drops them from a response with a warning. */
const CONNECTION_HEADERS = ['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade'];

/**
 * An early answer's headers on HTTP/2: ending the response ends the request's own stream, and the
 * session's other streams go on, so there is no connection to close — and none of the headers that
 * say so (Fastify's body parser sets `Connection: close` on the reply it hands over) may be sent.
 */
function withoutConnectionHeaders(headers: OutgoingHttpHeaders, length: number): OutgoingHttpHeaders {
  const kept: OutgoingHttpHeaders = { 'content-length': length };
  for (const [name, value] of Object.entries(headers)) {
    if (name !== 'content-length' && !CONNECTION_HEADERS.includes(name.toLowerCase())) kept[name] = value;
  }
  return kept;
}

/**
 * Sends `text` with `status` and `Connection: close` (HTTP/1) on a response the module has taken over
 * (`headers` include those the app's hooks set, CORS...), and, when the request body is still
 * arriving, lingers as described above before the socket closes.
 */
export function sendEarlyAnswer(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  headers: OutgoingHttpHeaders,
  text: string,
  limits: Pick<ResolvedLimitsOptions, 'lingerMs' | 'lingerBytes'>,
): void {
  if (res.headersSent || res.destroyed) return;
  const body = Buffer.from(text);
  res.writeHead(status, req.httpVersionMajor >= 2 ? withoutConnectionHeaders(headers, body.length) : { ...headers, 'content-length': body.length, connection: 'close' });
  // Nothing more is coming: all read already, or a client told no `100 Continue` sends no body.
  if (!bodyStillArriving(req) || req.destroyed || awaitingContinue.has(req) || limits.lingerMs === 0) {
    res.end(body);
    return;
  }
  res.write(body);
  let budget = limits.lingerBytes;
  const close = (): void => {
    clearTimeout(timer);
    req.off('data', discard);
    req.off('end', close);
    req.off('error', close);
    res.off('close', close);
    if (!res.writableEnded) res.end();
  };
  const discard = (chunk: Buffer): void => {
    budget -= chunk.length;
    if (budget < 0) close();
  };
  const timer = setTimeout(close, limits.lingerMs);
  timer.unref();
  req.on('data', discard);
  req.once('end', close);
  req.once('error', close);
  res.once('close', close);
  req.resume();
}

/** Whether a `Content-Type` names one of the media types the module reads as JSON (parameters ignored). */
export function isJsonRpcMediaType(contentType: string | undefined, mediaTypes: readonly string[]): boolean {
  if (contentType === undefined) return false;
  const semicolon = contentType.indexOf(';');
  const mediaType = (semicolon < 0 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
  return mediaTypes.includes(mediaType);
}
