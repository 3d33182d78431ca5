import type { ServerResponse } from 'node:http';
import { RpcHeader } from '@nest-jsonrpc/protocol';
import type { RpcHttpExchange } from '../context/rpc-context.js';
import type { RpcReplyWriter } from '../http/rpc-reply-writer.js';

/**
 * Takes the response over and writes a stream's head — live streams and durable attaches alike:
 * 200, the headers the app's hooks set (CORS...), `stream.headers`, the format's media type, the
 * durable stream's id when there is one, and the exchange's own (`X-Request-Id`...). Returns the
 * Node response to write the rows to.
 */
export function openStreamResponse(
  writer: RpcReplyWriter,
  exchange: RpcHttpExchange,
  streamHeaders: Readonly<Record<string, string>>,
  contentType: string,
  streamId?: string,
): ServerResponse {
  const headers: Record<string, string> = { ...streamHeaders, 'content-type': contentType };
  if (streamId !== undefined) headers[RpcHeader.StreamId] = streamId;
  return writer.openStream(exchange, 200, headers);
}
