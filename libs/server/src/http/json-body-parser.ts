import type { FastifyInstance } from 'fastify';
import { JSON_RPC_REQUEST_MEDIA_TYPES } from '@nest-jsonrpc/protocol';
import { enforceBodyLimit } from './early-answer.js';

/**
 * Replaces the inherited parsers in our encapsulated context with one that hands over the raw
 * text: JSON errors must become -32700 envelopes, not Fastify's 400, so parsing happens in the
 * route. A declared Content-Length over `bodyLimit` is refused before routing reads anything (any
 * media type, any verb); Fastify counts chunked bodies while reading, so nothing is buffered past
 * the limit. Both end in `FST_ERR_CTP_BODY_TOO_LARGE`, answered by `transportErrorHandler`.
 */
export function registerJsonRpcBodyParser(instance: FastifyInstance, bodyLimit: number): void {
  enforceBodyLimit(instance, bodyLimit);
  instance.removeAllContentTypeParsers();
  instance.addContentTypeParser([...JSON_RPC_REQUEST_MEDIA_TYPES], { parseAs: 'string', bodyLimit }, (_request, body, done) => {
    done(null, body);
  });
}

/** Fastify's `bodyLimit` for `maxRequestSize` (0 turns the limit off). */
export function bodyLimitOf(maxRequestSize: number): number {
  return maxRequestSize === 0 ? Number.MAX_SAFE_INTEGER : maxRequestSize;
}
