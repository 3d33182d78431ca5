import type { Logger } from '@nestjs/common';
import type { FastifyError, FastifyInstance, FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify';
import { RpcHttpExchange } from '../dispatch/rpc-context.js';
import type { RpcDispatcher, RpcItemOutcome } from '../dispatch/rpc-dispatcher.js';
import type { ResolvedJsonRpcOptions } from '../json-rpc.options.js';
import { RpcErrorCode } from '../protocol/error-codes.js';
import type { RpcErrorObject } from '../protocol/envelope.js';
import { NOT_JSON, parseJsonText } from '../protocol/json-text.js';
import { serializeError } from '../protocol/response.js';
import { JSON_RPC_CONTENT_TYPES, registerJsonRpcBodyParser } from './json-body-parser.js';
import { REQUEST_ID_HEADER, requestIdOf } from './request-id.js';

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';
const PARSE_ERROR: RpcErrorObject = Object.freeze({ code: RpcErrorCode.ParseError, message: 'Parse error' });

export interface RpcHttpRoutesDeps {
  dispatcher: RpcDispatcher;
  options: ResolvedJsonRpcOptions;
  logger: Logger;
}

/**
 * The Fastify side of `POST <path>`: an encapsulated plugin with its own body parser and error
 * handler, so nothing about the host app's parsers or error format leaks into JSON-RPC answers.
 */
export function jsonRpcHttpRoutes({ dispatcher, options, logger }: RpcHttpRoutesDeps): FastifyPluginCallback {
  const bodyLimit = options.maxRequestSize === 0 ? Number.MAX_SAFE_INTEGER : options.maxRequestSize;
  const mapStatus = options.httpStatus.enabled;
  const rolesResolver = options.security.rolesResolver;

  let warnedSentElsewhere = false;
  const send = (reply: FastifyReply, exchange: RpcHttpExchange, text: RpcItemOutcome): void => {
    if (reply.sent) {
      // Something in a call's chain answered the HTTP request itself — typically an app-wide
      // `@Catch()` filter written for controllers. Its answer stands; ours has nowhere to go.
      if (!warnedSentElsewhere) {
        warnedSentElsewhere = true;
        logger.warn(
          `The HTTP response to POST ${options.path} was sent by an enhancer (an exception filter writing ` +
            'to host.switchToHttp().getResponse()?), so the JSON-RPC answer was dropped. Let such filters ' +
            'rethrow for JSON-RPC calls: if (getRpcContext(host)) throw exception;',
        );
      }
      return;
    }
    reply.header(REQUEST_ID_HEADER, exchange.requestId);
    if (exchange.deprecations) {
      reply.header('deprecation', 'true');
      reply.header('x-rpc-deprecated', exchange.deprecations.join('; '));
    }
    if (exchange.retryAfter > 0) reply.header('retry-after', String(Math.ceil(exchange.retryAfter)));
    if (text === undefined) {
      reply.code(204).send();
      return;
    }
    reply.code(mapStatus ? exchange.status : 200).header('content-type', JSON_CONTENT_TYPE).send(text);
  };

  const handle = (request: FastifyRequest, reply: FastifyReply): Promise<void> | undefined => {
    const exchange = new RpcHttpExchange(request, reply, requestIdOf(request), rolesResolver);
    const body = parseJsonText(request.body as string | undefined);
    const outcome = body === NOT_JSON ? dispatcher.errorText(null, PARSE_ERROR, exchange) : dispatcher.dispatch(body, exchange);
    if (typeof outcome === 'object') return outcome.then((text) => send(reply, exchange, text));
    send(reply, exchange, outcome);
    return undefined;
  };

  /** Errors Fastify raises before our handler runs: body too large, wrong media type, bad framing. */
  const onTransportError = (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    let status: number;
    let rpcError: RpcErrorObject;
    switch (error.code) {
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        status = 413;
        rpcError = { code: RpcErrorCode.InvalidRequest, message: `Invalid Request: body exceeds ${options.maxRequestSize} bytes` };
        break;
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      case 'FST_ERR_CTP_INVALID_TYPE':
        status = 415;
        rpcError = { code: RpcErrorCode.InvalidRequest, message: `Invalid Request: Content-Type must be ${JSON_RPC_CONTENT_TYPES[0]}` };
        break;
      default:
        if (error.statusCode !== undefined && error.statusCode < 500) {
          status = 400;
          rpcError = { code: RpcErrorCode.ParseError, message: 'Parse error: the request body could not be read' };
        } else {
          logger.error(`Request failed before dispatch: ${error.message}`, error.stack);
          status = 500;
          rpcError = { code: RpcErrorCode.InternalError, message: 'Internal error' };
        }
    }
    reply
      .code(status)
      .header(REQUEST_ID_HEADER, requestIdOf(request))
      .header('content-type', JSON_CONTENT_TYPE)
      .send(serializeError(null, rpcError));
  };

  const methodNotAllowed = (request: FastifyRequest, reply: FastifyReply) => {
    reply
      .code(405)
      .header('allow', 'POST')
      .header(REQUEST_ID_HEADER, requestIdOf(request))
      .header('content-type', JSON_CONTENT_TYPE)
      .send(serializeError(null, { code: RpcErrorCode.InvalidRequest, message: 'Invalid Request: use POST' }));
  };

  return (instance: FastifyInstance, _opts, done) => {
    registerJsonRpcBodyParser(instance, bodyLimit);
    instance.setErrorHandler(onTransportError);
    instance.route({ method: 'POST', url: options.path, bodyLimit, handler: handle });
    instance.route({ method: ['GET', 'PUT', 'PATCH', 'DELETE'], url: options.path, handler: methodNotAllowed });
    done();
  };
}
