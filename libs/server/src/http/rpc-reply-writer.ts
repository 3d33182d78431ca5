import type { Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
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
import type { RpcExceptionMapper } from '../errors/rpc-exception-mapper.js';
import { DEFAULT_LIMITS, type ResolvedLimitsOptions } from '../options/limits-options.js';
import { bodyStillArriving, sendEarlyAnswer } from './early-answer.js';
import { requestIdOf } from './request-id.js';

/**
 * The one writer of JSON answers: envelopes (results and errors) and the headers that go with
 * them (`X-Request-Id`, `Retry-After`, `Deprecation`, `X-Rpc-Deprecated`). `/rpc`, the stream
 * route's pre-stream errors, the transport errors and the durable routes all write through it.
 *
 * What JSON cannot carry never reaches the wire: a result or error `data` it cannot represent
 * (BigInt, a cycle) and an error code that is not an integer become -32603, logged, with the id
 * kept.
 */
export class RpcReplyWriter {
  private warnedSentElsewhere = false;

  constructor(
    private readonly mapper: RpcExceptionMapper,
    private readonly logger: Logger,
    private readonly limits: ResolvedLimitsOptions = DEFAULT_LIMITS,
  ) {}

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
    try {
      return { text: serializeError(id, error), error };
    } catch (serializationError) {
      const internal = this.mapper.toErrorObject(serializationError, method);
      return { text: serializeError(id, internal), error: internal };
    }
  }

  /** What an answered error means for the response: its HTTP status, its `Retry-After`. */
  noteError(exchange: RpcHttpExchange, error: RpcErrorObject): void {
    exchange.status = Math.max(exchange.status, httpStatusForCode(error.code));
    if (error.code === RpcErrorCode.RateLimitExceeded) {
      const retryAfter = (error.data as { retryAfter?: unknown } | undefined)?.retryAfter;
      if (typeof retryAfter === 'number') exchange.noteRetryAfter(retryAfter);
    }
  }

  /** The headers of every answer to this exchange (also for a hijacked stream response). */
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
  send(reply: FastifyReply, exchange: RpcHttpExchange, status: number, text: string | undefined): void {
    if (reply.sent) {
      this.warnSentElsewhere(reply);
      return;
    }
    reply.headers(this.answerHeaders(exchange));
    if (text === undefined) reply.code(204).send();
    else reply.code(status).header('content-type', JSON_CONTENT_TYPE).send(text);
  }

  /**
   * An error envelope (id null) with `status`, outside any call: body too large, bad media type.
   * Sent before the body was read, it closes the connection after a lingering read of the rest
   * of the upload (`early-answer.ts`), so a client still sending reads it.
   */
  sendTransportError(
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    error: RpcErrorObject,
    headers?: Record<string, string>,
    linger: Pick<ResolvedLimitsOptions, 'lingerMs' | 'lingerBytes'> = this.limits,
  ): void {
    const all = { ...headers, [RpcHeader.RequestId]: requestIdOf(request), 'content-type': JSON_CONTENT_TYPE };
    if (bodyStillArriving(request)) return sendEarlyAnswer(request, reply, status, all, serializeError(null, error), linger);
    reply.code(status).headers(all).send(serializeError(null, error));
  }

  /**
   * A JSON body that is not an envelope (the MCP REST surface's refusals), sent before the request
   * body was read: with the same lingering close as {@link sendTransportError}, so the client
   * still reads it.
   */
  sendEarlyJson(request: FastifyRequest, reply: FastifyReply, status: number, text: string): void {
    if (!bodyStillArriving(request)) return this.sendJson(reply, status, text);
    sendEarlyAnswer(request, reply, status, { 'content-type': JSON_CONTENT_TYPE, 'cache-control': 'no-store' }, text, this.limits);
  }

  /** A JSON body that is not an envelope (the durable REST routes), never cached by intermediaries. */
  sendJson(reply: FastifyReply, status: number, text: string): void {
    reply.code(status).header('content-type', JSON_CONTENT_TYPE).header('cache-control', 'no-store').send(text);
  }

  private warnSentElsewhere(reply: FastifyReply): void {
    // Something in a call's chain answered the HTTP request itself — typically an app-wide
    // `@Catch()` filter written for controllers. Its answer stands; ours has nowhere to go.
    if (this.warnedSentElsewhere) return;
    this.warnedSentElsewhere = true;
    this.logger.warn(
      `The HTTP response to ${reply.request.method} ${reply.request.url} was sent by an enhancer (an exception filter writing ` +
        'to host.switchToHttp().getResponse()?), so the JSON-RPC answer was dropped. Let such filters ' +
        'rethrow for JSON-RPC calls: if (getRpcContext(host)) throw exception;',
    );
  }
}
