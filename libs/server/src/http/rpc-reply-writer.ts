import type { Logger } from '@nestjs/common';
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import {
  httpStatusForCode,
  JSON_CONTENT_TYPE,
  RpcErrorCode,
  RpcHeader,
  serializeError,
  serializeResult,
  serializeSuccess,
  type RpcErrorObject,
  type RpcId,
} from '@nest-jsonrpc/protocol';
import { RpcSerializedResult } from '../caching/serialized-result.js';
import type { RpcHttpExchange } from '../context/rpc-context.js';
import { encodeOrInternal } from '../errors/error-encoding.js';
import type { RpcExceptionMapper } from '../errors/rpc-exception-mapper.js';
import { DEFAULT_LIMITS, type ResolvedLimitsOptions } from '../options/limits-options.js';
import type { BodyBounds } from './body-limit.js';
import { bodyStillArriving, sendEarlyAnswer } from './early-answer.js';
import { TransportErrors, type RouteFamily, type TransportErrorDetail, type TransportErrorKind } from './transport-errors.js';

/** The bounds of a writer given none (a unit test's): the defaults of `maxRequestSize` and `limits`. */
const DEFAULT_WRITER_LIMITS: BodyBounds = Object.freeze({ maxRequestSize: 1_048_576, limits: DEFAULT_LIMITS });
const NO_LINGER = Object.freeze({ lingerMs: 0, lingerBytes: 0 });
/** Bodies that are not envelopes (durable REST, MCP REST) differ per caller: never cached by intermediaries. */
const NOT_STORED = 'no-store';

/**
 * The one writer of every answer of the module's routes, whatever the platform: envelopes
 * (results and errors) and the headers that go with them (`X-Request-Id`, `Retry-After`,
 * `Deprecation`, `X-Rpc-Deprecated`), the REST routes' JSON, the MCP answers, the explorer's
 * files, the heads of streams, and the transport errors of the catalogue
 * (`http/transport-errors.ts`) — so every answer carries its `X-Request-Id`.
 *
 * What JSON cannot carry never reaches the wire: a result or error `data` it cannot represent
 * (BigInt, a cycle) and an error code that is not an integer become -32603, logged, with the id
 * kept.
 */
export class RpcReplyWriter {
  readonly transportErrors: TransportErrors;
  private readonly limits: ResolvedLimitsOptions;
  private warnedSentElsewhere = false;

  constructor(
    private readonly mapper: RpcExceptionMapper,
    private readonly logger: Logger,
    bounds: BodyBounds = DEFAULT_WRITER_LIMITS,
  ) {
    this.limits = bounds.limits;
    this.transportErrors = new TransportErrors({ maxRequestSize: bounds.maxRequestSize, bodyTimeoutMs: bounds.limits.bodyTimeoutMs });
  }

  /** A success envelope; a result JSON cannot represent becomes this call's -32603. */
  success(exchange: RpcHttpExchange, id: RpcId, value: unknown, method: string): string {
    if (value instanceof RpcSerializedResult) return serializeSuccess(id, value.json);
    let json: string;
    try {
      json = serializeResult(value);
    } catch (error) {
      return this.error(exchange, id, this.mapper.toErrorObject(error, method), method);
    }
    return serializeSuccess(id, json);
  }

  /** The error object of what a call threw (mapped by the app's exception mapper). */
  errorOf(thrown: unknown, method?: string): RpcErrorObject {
    return this.mapper.toErrorObject(thrown, method);
  }

  /**
   * An error envelope. Notes on the exchange the HTTP status it calls for (used when
   * `httpStatus.enabled`) and, for -32003, its `retryAfter` (the response's `Retry-After`).
   */
  error(exchange: RpcHttpExchange, id: RpcId, error: RpcErrorObject, method?: string): string {
    const envelope = this.errorEnvelope(id, error, method);
    this.noteError(exchange, envelope.error);
    return envelope.text;
  }

  /** The envelope of `error`, or of the -32603 it becomes when JSON cannot carry it. */
  errorEnvelope(id: RpcId, error: RpcErrorObject, method?: string): { text: string; error: RpcErrorObject } {
    const { encoded, error: sent } = encodeOrInternal(this.mapper, error, method, (e) => serializeError(id, e));
    return { text: encoded, error: sent };
  }

  /** `encode(error)` — a stream's error frame — or of the -32603 it becomes when JSON cannot carry it. */
  encodeError(encode: (error: RpcErrorObject) => string, error: RpcErrorObject, method?: string): string {
    return encodeOrInternal(this.mapper, error, method, encode).encoded;
  }

  /** What an answered error means for the response: its HTTP status, its `Retry-After`. */
  noteError(exchange: RpcHttpExchange, error: RpcErrorObject): void {
    exchange.status = Math.max(exchange.status, httpStatusForCode(error.code));
    if (error.code === RpcErrorCode.RateLimitExceeded) {
      const retryAfter = (error.data as { retryAfter?: unknown } | undefined)?.retryAfter;
      if (typeof retryAfter === 'number') exchange.noteRetryAfter(retryAfter);
    }
  }

  /** The headers of every answer to this exchange (also for a stream's head). */
  answerHeaders(exchange: RpcHttpExchange): Record<string, string> {
    const headers: Record<string, string> = { [RpcHeader.RequestId]: exchange.requestId };
    if (exchange.deprecations) {
      headers[RpcHeader.Deprecation] = 'true';
      headers[RpcHeader.RpcDeprecated] = exchange.deprecations.join('; ');
    }
    if (exchange.retryAfter > 0) headers[RpcHeader.RetryAfter] = String(Math.ceil(exchange.retryAfter));
    return headers;
  }

  /** Sends `text` (a JSON-RPC answer) with `status`, or 204 with no body when there is nothing to answer. */
  send(exchange: RpcHttpExchange, status: number, text: string | undefined): void {
    if (exchange.sent) return this.warnSentElsewhere(exchange);
    const headers: OutgoingHttpHeaders = this.answerHeaders(exchange);
    if (text === undefined) return exchange.platform.send(exchange.reply, 204, headers);
    headers['content-type'] = JSON_CONTENT_TYPE;
    exchange.platform.send(exchange.reply, status, headers, text);
  }

  /** A JSON body that is not an envelope (the REST routes), never cached by intermediaries; `headers`: more of them (a challenge). */
  sendJson(exchange: RpcHttpExchange, status: number, text: string, headers?: OutgoingHttpHeaders): void {
    this.sendBody(exchange, status, { ...headers, 'content-type': JSON_CONTENT_TYPE, 'cache-control': NOT_STORED }, text);
  }

  /** Any other whole answer (an MCP answer, a page of the explorer), with this exchange's headers. */
  sendBody(exchange: RpcHttpExchange, status: number, headers: OutgoingHttpHeaders, body?: string | Buffer): void {
    if (exchange.sent) return this.warnSentElsewhere(exchange);
    exchange.platform.send(exchange.reply, status, { ...headers, ...this.answerHeaders(exchange) }, body);
  }

  /**
   * A web `Response` (what the MCP SDK answers) with this exchange's headers: a JSON body in one
   * write; an event stream piped as it is produced, with backpressure, and cancelled when the
   * client goes away. Settles when the answer is complete (or the client gone).
   */
  async sendWebResponse(exchange: RpcHttpExchange, response: Response): Promise<void> {
    const headers: OutgoingHttpHeaders = {};
    response.headers.forEach((value, name) => {
      if (name !== 'content-length') headers[name] = value;
    });
    // The same head on either platform: JSON says its charset as the module's own answers do
    // (Fastify would add it, Express would not), and an empty body (a 202) has no media type.
    if (headers['content-type'] === 'application/json') headers['content-type'] = JSON_CONTENT_TYPE;
    if (response.body === null || !response.headers.get('content-type')?.startsWith('text/event-stream')) {
      const text = await response.text();
      return this.sendBody(exchange, response.status, headers, text === '' ? undefined : text);
    }
    const res = this.openStream(exchange, response.status, headers);
    await pipeline(Readable.fromWeb(response.body as WebReadableStream<Uint8Array>), res).catch(() => undefined);
  }

  /**
   * Takes the response over and writes the head of a streamed answer: the headers the app's hooks
   * set (CORS, security headers), then `headers`, then this exchange's own. Returns the Node
   * response to stream to; from now on the platform does not touch it.
   */
  openStream(exchange: RpcHttpExchange, status: number, headers: OutgoingHttpHeaders): ServerResponse {
    const pending = exchange.platform.takeOver(exchange.reply);
    const res = exchange.res;
    if (!res.destroyed && !res.headersSent) res.writeHead(status, { ...pending, ...headers, ...this.answerHeaders(exchange) });
    flushEveryWrite(res);
    return res;
  }

  /**
   * A refusal of the catalogue, outside any call (body too large, bad media type, verb not
   * served...), in the shape of the route's family. Sent before the body was read, it closes the
   * connection after a lingering read of the rest of the upload (`early-answer.ts`), so a client
   * still sending reads it; a body that arrived too slowly is not waited for. The refusals of the
   * body reader (413, the content coding's 415, a body that could not be inflated) close the
   * connection even when the body is all read, as Fastify does after its parser's errors.
   */
  sendTransportError(exchange: RpcHttpExchange, family: RouteFamily, kind: TransportErrorKind, detail?: TransportErrorDetail): void {
    const { status, shape, text, headers: own, closes } = this.transportErrors.refusal(family, kind, detail);
    const headers: OutgoingHttpHeaders = { ...own, 'content-type': JSON_CONTENT_TYPE };
    if (shape !== 'envelope') headers['cache-control'] = NOT_STORED;
    if (detail?.allow !== undefined) headers.allow = detail.allow;
    if (exchange.sent) return;
    if (!closes && !bodyStillArriving(exchange.raw)) return this.sendBody(exchange, status, headers, text);
    const pending = exchange.platform.takeOver(exchange.reply);
    const linger = kind === 'bodyTimeout' ? NO_LINGER : this.limits;
    sendEarlyAnswer(exchange.raw, exchange.res, status, { ...pending, ...headers, ...this.answerHeaders(exchange) }, text, linger);
  }

  private warnSentElsewhere(exchange: RpcHttpExchange): void {
    // Something in a call's chain answered the HTTP request itself — typically an app-wide
    // `@Catch()` filter written for controllers. Its answer stands; ours has nowhere to go.
    if (this.warnedSentElsewhere) return;
    this.warnedSentElsewhere = true;
    this.logger.warn(
      `The HTTP response to ${exchange.method} ${exchange.raw.url} was sent by an enhancer (an exception filter writing ` +
        'to host.switchToHttp().getResponse()?), so the JSON-RPC answer was dropped. Let such filters ' +
        'rethrow for JSON-RPC calls: if (getRpcContext(host)) throw exception;',
    );
  }
}

/**
 * A compressing middleware in front of the routes (`app.use(compression())`, as Nest's docs set it
 * up on Express) holds what a stream writes in its zlib stream until the response ends, unless
 * something calls the `res.flush()` it adds: an SSE or JSON-array stream (`text/event-stream` and
 * `application/json` are compressible) would reach the client all at once, keep-alive comments
 * included. So each write of a streamed answer is flushed when the response has such a `flush`
 * (the compressed bytes so far go out, at a few bytes' cost per flush); a response without one is
 * left as it is.
 */
function flushEveryWrite(res: ServerResponse): void {
  const flush = (res as ServerResponse & { flush?: unknown }).flush;
  if (typeof flush !== 'function') return;
  const write = res.write;
  res.write = function writeAndFlush(this: ServerResponse, ...args: Parameters<ServerResponse['write']>): boolean {
    const accepted = (write as (...a: unknown[]) => boolean).apply(this, args);
    flush.call(this);
    return accepted;
  } as ServerResponse['write'];
}
