import type { FastifyInstance } from 'fastify';
import { JSON_RPC_REQUEST_MEDIA_TYPES, RpcErrorCode, type RpcErrorObject } from '@nest-jsonrpc/protocol';
import type { ResolvedJsonRpcOptions } from '../options/json-rpc-options.js';
import { enforceBodyLimit, type BodyBounds } from './early-answer.js';
import type { RpcReplyWriter } from './rpc-reply-writer.js';

/**
 * Replaces the inherited parsers in our encapsulated context with one that hands over the raw
 * text: JSON errors must become -32700 envelopes, not Fastify's 400, so parsing happens in the
 * route. A declared Content-Length over `bodyLimit` is refused before routing reads anything (any
 * media type, any verb); Fastify counts chunked bodies while reading, so nothing is buffered past
 * the limit. Both end in `FST_ERR_CTP_BODY_TOO_LARGE`, answered by `transportErrorHandler`.
 */
export function registerJsonRpcBodyParser(instance: FastifyInstance, bounds: BodyBounds): void {
  enforceBodyLimit(instance, bounds);
  instance.removeAllContentTypeParsers();
  instance.addContentTypeParser([...JSON_RPC_REQUEST_MEDIA_TYPES], { parseAs: 'string', bodyLimit: bounds.limit }, (_request, body, done) => {
    done(null, body);
  });
}

/** Fastify's `bodyLimit` for `maxRequestSize` (0 turns the limit off). */
export function bodyLimitOf(maxRequestSize: number): number {
  return maxRequestSize === 0 ? Number.MAX_SAFE_INTEGER : maxRequestSize;
}

const NO_LINGER = Object.freeze({ lingerMs: 0, lingerBytes: 0 });

/**
 * The module's bounds on request bodies: `maxRequestSize`, and `limits.bodyTimeoutMs` answered
 * 408 with a -32600 envelope (and `Connection: close`).
 */
export function bodyBoundsOf(options: Pick<ResolvedJsonRpcOptions, 'maxRequestSize' | 'limits'>, writer: RpcReplyWriter): BodyBounds {
  const timeoutMs = options.limits.bodyTimeoutMs;
  const late: RpcErrorObject = Object.freeze({
    code: RpcErrorCode.InvalidRequest,
    message: `Invalid Request: the body did not arrive within ${timeoutMs} ms`,
  });
  const bounds: BodyBounds = {
    limit: bodyLimitOf(options.maxRequestSize),
    timeoutMs,
    // No lingering: a client this slow would only hold the connection longer.
    onTimeout: (request, reply) => writer.sendTransportError(request, reply, 408, late, undefined, NO_LINGER),
  };
  return Object.freeze(bounds);
}
