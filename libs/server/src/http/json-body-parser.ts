import type { FastifyInstance } from 'fastify';
import { JSON_RPC_REQUEST_MEDIA_TYPES } from '@nest-jsonrpc/protocol';

/**
 * Replaces the inherited parsers in our encapsulated context with one that hands over the raw
 * text: JSON errors must become -32700 envelopes, not Fastify's 400, so parsing happens in the
 * route. Fastify enforces `bodyLimit` while reading (by Content-Length up front, and by counting
 * for chunked bodies), so nothing is buffered past the limit.
 */
export function registerJsonRpcBodyParser(instance: FastifyInstance, bodyLimit: number): void {
  instance.removeAllContentTypeParsers();
  instance.addContentTypeParser([...JSON_RPC_REQUEST_MEDIA_TYPES], { parseAs: 'string', bodyLimit }, (_request, body, done) => {
    done(null, body);
  });
}

/** Fastify's `bodyLimit` for `maxRequestSize` (0 turns the limit off). */
export function bodyLimitOf(maxRequestSize: number): number {
  return maxRequestSize === 0 ? Number.MAX_SAFE_INTEGER : maxRequestSize;
}
