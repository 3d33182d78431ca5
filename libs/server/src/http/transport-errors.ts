import type { Logger } from '@nestjs/common';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { RpcErrorCode } from '../protocol/error-codes.js';
import type { RpcErrorObject } from '../protocol/envelope.js';
import { serializeError } from '../protocol/response.js';
import { JSON_RPC_CONTENT_TYPES } from './json-body-parser.js';
import { REQUEST_ID_HEADER, requestIdOf } from './request-id.js';

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** Sends a JSON-RPC error envelope (id null) with `status`, outside any call. */
export function sendEnvelopeError(request: FastifyRequest, reply: FastifyReply, status: number, error: RpcErrorObject): void {
  reply
    .code(status)
    .header(REQUEST_ID_HEADER, requestIdOf(request))
    .header('content-type', JSON_CONTENT_TYPE)
    .send(serializeError(null, error));
}

/**
 * The error handler of our encapsulated route plugins: what Fastify raises before a handler runs
 * (body too large, wrong media type, broken framing) answered as a JSON-RPC envelope with its
 * HTTP status, never Fastify's own error shape.
 */
export function transportErrorHandler(maxRequestSize: number, logger: Logger, where: string) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    switch (error.code) {
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return sendEnvelopeError(request, reply, 413, {
          code: RpcErrorCode.InvalidRequest,
          message: `Invalid Request: body exceeds ${maxRequestSize} bytes`,
        });
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      case 'FST_ERR_CTP_INVALID_TYPE':
        return sendEnvelopeError(request, reply, 415, {
          code: RpcErrorCode.InvalidRequest,
          message: `Invalid Request: Content-Type must be ${JSON_RPC_CONTENT_TYPES[0]}`,
        });
    }
    if (error.statusCode !== undefined && error.statusCode < 500) {
      return sendEnvelopeError(request, reply, 400, { code: RpcErrorCode.ParseError, message: 'Parse error: the request body could not be read' });
    }
    logger.error(`${where} failed before dispatch: ${error.message}`, error.stack);
    sendEnvelopeError(request, reply, 500, { code: RpcErrorCode.InternalError, message: 'Internal error' });
  };
}
