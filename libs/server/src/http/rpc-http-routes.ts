import type { Logger } from '@nestjs/common';
import type { FastifyInstance, FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify';
import { RpcHttpExchange } from '../dispatch/rpc-context.js';
import type { RpcDispatcher, RpcItemOutcome } from '../dispatch/rpc-dispatcher.js';
import type { ResolvedJsonRpcOptions } from '../json-rpc.options.js';
import { RpcErrorCode } from '../protocol/error-codes.js';
import type { RpcErrorObject } from '../protocol/envelope.js';
import { NOT_JSON, parseJsonText } from '../protocol/json-text.js';
import { registerJsonRpcBodyParser } from './json-body-parser.js';
import { JSON_CONTENT_TYPE, sendEnvelopeError, transportErrorHandler } from './transport-errors.js';
import { REQUEST_ID_HEADER, requestIdOf } from './request-id.js';

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


  const methodNotAllowed = (request: FastifyRequest, reply: FastifyReply) => {
    reply.header('allow', 'POST');
    sendEnvelopeError(request, reply, 405, { code: RpcErrorCode.InvalidRequest, message: 'Invalid Request: use POST' });
  };

  return (instance: FastifyInstance, _opts, done) => {
    registerJsonRpcBodyParser(instance, bodyLimit);
    instance.setErrorHandler(transportErrorHandler(options.maxRequestSize, logger, 'Request'));
    instance.route({ method: 'POST', url: options.path, bodyLimit, handler: handle });
    instance.route({ method: ['GET', 'PUT', 'PATCH', 'DELETE'], url: options.path, handler: methodNotAllowed });
    done();
  };
}
