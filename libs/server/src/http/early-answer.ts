import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errorCodes } from 'fastify';
import type { IncomingMessage, OutgoingHttpHeaders, Server } from 'node:http';
import type { ResolvedLimitsOptions } from '../options/limits-options.js';

/**
 * Answering a request before its body has been read — 413 for a body over the limit, 415 for a
 * media type we do not parse — and still having the client read the answer.
 *
 * Node closes a `Connection: close` response's socket as soon as the answer is written. Bytes
 * of the upload still arriving then meet a closed socket, the kernel answers them with a reset,
 * and a client still sending (Node's `fetch`, `node:http`, most HTTP libraries) reports
 * `EPIPE`/`ECONNRESET` instead of the 413 it was sent. Neither Node nor Fastify has a lingering
 * close, so this file is one, as nginx does it (`lingering_close`): the answer goes out at once,
 * the rest of the upload is read and thrown away, and the response ends (closing the socket) when
 * the upload is complete, or after `limits.lingerMs`, or past `limits.lingerBytes`, whichever
 * comes first — a client that keeps sending cannot hold the connection longer than that.
 *
 * `Expect: 100-continue`: Node answers `100 Continue` before any route code runs unless the
 * server has a `checkContinue` listener. With {@link installExpectContinue} the route's own body
 * limit decides first: a declared length over it gets its 413 and the body is never sent; any
 * other request gets `100 Continue` from a root `onRequest` hook, so every route keeps working.
 */

/** Requests that sent `Expect: 100-continue` and have not been told to continue. */
const awaitingContinue = new WeakSet<IncomingMessage>();
const INSTALLED = Symbol.for('nest-jsonrpc.expect-continue');

/** The `Content-Length` the client declared (NaN when there is none: chunked, or no body). */
export function declaredLength(request: FastifyRequest): number {
  const header = request.headers['content-length'];
  return header === undefined ? Number.NaN : Number(header);
}

/**
 * Whether body bytes of `request` may still be on their way: it declared a body (a length, or
 * chunked) that has not been read to its end. A request without a body is not complete yet while
 * its route runs (Node marks it so right after), but has nothing more to send.
 */
export function bodyStillArriving(request: FastifyRequest): boolean {
  if (request.raw.complete) return false;
  return declaredLength(request) > 0 || request.headers['transfer-encoding'] !== undefined;
}

/**
 * Lets the route's body limit see `Expect: 100-continue` requests before their body is sent.
 * Installed once per server; routes outside this module get `100 Continue` as before, only later
 * (after routing) — and those whose own `bodyLimit` the declared length exceeds get Fastify's 413
 * instead of an upload first.
 */
export function installExpectContinue(fastify: FastifyInstance): void {
  const server = fastify.server as Server & { [INSTALLED]?: true };
  if (server[INSTALLED] || typeof server.on !== 'function') return;
  server[INSTALLED] = true;
  server.on('checkContinue', (req, res) => {
    awaitingContinue.add(req);
    server.emit('request', req, res);
  });
  fastify.addHook('onRequest', (request, reply, done) => {
    const req = request.raw;
    if (awaitingContinue.has(req) && !(declaredLength(request) > request.routeOptions.bodyLimit)) {
      awaitingContinue.delete(req);
      if (!req.socket.destroyed) reply.raw.writeContinue();
    }
    done();
  });
}

/** What a route plugin holds its request bodies to. */
export interface BodyBounds {
  /** Largest body, in bytes (`bodyLimit`). */
  readonly limit: number;
  /** Longest time, in ms, from the request's arrival to its last body byte; 0 = none. */
  readonly timeoutMs: number;
  /** Answers a body that did not arrive in time (while its upload is still going on). */
  onTimeout(request: FastifyRequest, reply: FastifyReply): void;
}

/**
 * The body part of a route plugin: every route registered after it (in `instance`) gets
 * `bounds.limit` as `bodyLimit`, and a declared `Content-Length` over it is refused before
 * anything is read, with Fastify's own `FST_ERR_CTP_BODY_TOO_LARGE` — so the plugin's error
 * handler answers both cases, declared and counted while reading (chunked), the same way.
 *
 * A body still arriving `bounds.timeoutMs` after the request did — a client trickling it, one
 * byte a second — is answered by `bounds.onTimeout` (or, when its answer is already out, its
 * connection closed). Fastify's `requestTimeout` would bound it too, but it defaults to off and is
 * the app's server-wide setting; this one is the module's own, for its own routes.
 */
export function enforceBodyLimit(instance: FastifyInstance, bounds: BodyBounds): void {
  const { limit, timeoutMs } = bounds;
  instance.addHook('onRoute', (route) => {
    route.bodyLimit ??= limit;
  });
  instance.addHook('onRequest', (request, reply, done) => {
    const length = declaredLength(request);
    if (length > limit) return done(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
    if (timeoutMs > 0 && (length > 0 || request.headers['transfer-encoding'] !== undefined)) watchBody(request, reply, bounds);
    done();
  });
}

function watchBody(request: FastifyRequest, reply: FastifyReply, bounds: BodyBounds): void {
  const req = request.raw;
  const timer = setTimeout(() => {
    if (req.complete || req.destroyed) return;
    if (reply.sent || reply.raw.headersSent) req.socket.destroy();
    else bounds.onTimeout(request, reply);
  }, bounds.timeoutMs);
  timer.unref();
  // One listener: 'close' follows the end of the body (or an abort), and the timer checks
  // `req.complete` itself. A second ('end') listener per request cost ~8 % of a small call's rate.
  req.once('close', () => clearTimeout(timer));
}

/**
 * Sends `text` with `status` and `Connection: close`, and, when the request body is still
 * arriving, lingers as described above before the socket closes. Headers set by hooks (CORS...)
 * are kept.
 */
export function sendEarlyAnswer(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  headers: OutgoingHttpHeaders,
  text: string,
  limits: Pick<ResolvedLimitsOptions, 'lingerMs' | 'lingerBytes'>,
): void {
  const req = request.raw;
  const res = reply.raw;
  const body = Buffer.from(text);
  reply.hijack();
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { ...(reply.getHeaders() as OutgoingHttpHeaders), ...headers, 'content-length': body.length, connection: 'close' });
  // Nothing more is coming: all read already, or a client told no `100 Continue` sends no body.
  if (!bodyStillArriving(request) || req.destroyed || awaitingContinue.has(req) || limits.lingerMs === 0) {
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
