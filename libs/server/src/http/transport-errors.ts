import type { Logger } from '@nestjs/common';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { JSON_RPC_REQUEST_MEDIA_TYPES, RpcErrorCode, type RpcErrorObject } from '@nest-jsonrpc/protocol';
import { RpcRequestTooLargeException } from '../errors/rpc-exceptions.js';
import type { RpcReplyWriter } from './rpc-reply-writer.js';

const UNSUPPORTED_MEDIA_TYPE: RpcErrorObject = Object.freeze({
  code: RpcErrorCode.InvalidRequest,
  message: `Invalid Request: Content-Type must be ${JSON_RPC_REQUEST_MEDIA_TYPES[0]}`,
});
const UNREADABLE_BODY: RpcErrorObject = Object.freeze({ code: RpcErrorCode.ParseError, message: 'Parse error: the request body could not be read' });
const INTERNAL: RpcErrorObject = Object.freeze({ code: RpcErrorCode.InternalError, message: 'Internal error' });

/**
 * The error handler of our encapsulated route plugins: what Fastify raises before a handler runs
 * (body too large, wrong media type, broken framing) answered as a JSON-RPC envelope with its
 * HTTP status, never Fastify's own error shape.
 */
export function transportErrorHandler(maxRequestSize: number, writer: RpcReplyWriter, logger: Logger, where: string) {
  const tooLarge = tooLargeError(maxRequestSize);
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    switch (error.code) {
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return writer.sendTransportError(request, reply, 413, tooLarge);
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      case 'FST_ERR_CTP_INVALID_TYPE':
        return writer.sendTransportError(request, reply, 415, UNSUPPORTED_MEDIA_TYPE);
    }
    if (error.statusCode !== undefined && error.statusCode < 500) return writer.sendTransportError(request, reply, 400, UNREADABLE_BODY);
    logger.error(`${where} failed before dispatch: ${error.message}`, error.stack);
    writer.sendTransportError(request, reply, 500, INTERNAL);
  };
}

/** The 413 envelope's error object, the same on every route. */
export function tooLargeError(maxRequestSize: number): RpcErrorObject {
  return RpcRequestTooLargeException.forLimit(maxRequestSize).toErrorObject();
}

/** `405` with `Allow`, for the verbs a route does not serve. */
export function methodNotAllowed(writer: RpcReplyWriter, allow: string, hint: string) {
  const error: RpcErrorObject = Object.freeze({ code: RpcErrorCode.InvalidRequest, message: `Invalid Request: ${hint}` });
  return (request: FastifyRequest, reply: FastifyReply): void => writer.sendTransportError(request, reply, 405, error, { allow });
}
