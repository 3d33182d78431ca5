/**
 * The Fastify side of the streaming endpoint: `POST <stream.path>` (one envelope in, rows out) and
 * `GET <stream.path>?method=&params=&id=` (SSE methods, for `EventSource`). An encapsulated plugin
 * with its own body parser and error handler, like the `/rpc` routes.
 *
 * Pre-stream failures answer a plain JSON-RPC error envelope with the statuses of DESIGN §4.
 * Once the handler has returned its iterable the reply is hijacked, headers go out at once with
 * 200, and `StreamResponseWriter` owns the socket: from then on every error is an in-band frame.
 */
import type { Logger } from '@nestjs/common';
import type { FastifyInstance, FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify';
import type { OutgoingHttpHeaders } from 'node:http';
import { StreamFormat } from '../decorators/rpc-stream.decorator.js';
import { RpcHttpExchange } from '../dispatch/rpc-context.js';
import type { RpcDispatcher, RpcStreamOpening } from '../dispatch/rpc-dispatcher.js';
import { RpcExceptionMapper } from '../errors/exception-mapper.js';
import { registerJsonRpcBodyParser } from '../http/json-body-parser.js';
import { JSON_CONTENT_TYPE, sendEnvelopeError, transportErrorHandler } from '../http/transport-errors.js';
import { REQUEST_ID_HEADER, requestIdOf } from '../http/request-id.js';
import type { ResolvedJsonRpcOptions } from '../json-rpc.options.js';
import { RpcErrorCode } from '../protocol/error-codes.js';
import type { RpcErrorObject, RpcId } from '../protocol/envelope.js';
import { NOT_JSON, parseJsonText } from '../protocol/json-text.js';
import { serializeError } from '../protocol/response.js';
import { frameEncoderFor } from './frame-encoders.js';
import { preStreamHttpStatus } from './pre-stream-status.js';
import { rowIteratorOf, unboxStreamSource } from './stream-source.js';
import { StreamResponseWriter, type StreamWriterConfig } from './stream-writer.js';

const PARSE_ERROR: RpcErrorObject = Object.freeze({ code: RpcErrorCode.ParseError, message: 'Parse error' });
const BATCH_REJECTED: RpcErrorObject = Object.freeze({
  code: RpcErrorCode.InvalidRequest,
  message: 'Streaming endpoint accepts only a single request',
});
/** The in-band frame of streams still open when the server closes. */
export const SHUTDOWN_ERROR: RpcErrorObject = Object.freeze({ code: -32000, message: 'Server shutting down' });

/** Integer-looking ids (`id=7`) are numbers, as a JSON-RPC client sending `"id":7` meant; anything else stays a string. */
const INTEGER_ID = /^(?:0|-?[1-9]\d{0,14})$/;

export interface RpcStreamRoutesDeps {
  dispatcher: RpcDispatcher;
  options: ResolvedJsonRpcOptions;
  logger: Logger;
}

function invalid(reason: string): RpcErrorObject {
  return { code: RpcErrorCode.InvalidRequest, message: `Invalid Request: ${reason}` };
}

function isPromiseLike<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as Promise<T>).then === 'function';
}

export function jsonRpcStreamRoutes({ dispatcher, options, logger }: RpcStreamRoutesDeps): FastifyPluginCallback {
  const bodyLimit = options.maxRequestSize === 0 ? Number.MAX_SAFE_INTEGER : options.maxRequestSize;
  const { path, keepAliveMs, headers: streamHeaders } = options.stream;
  const rolesResolver = options.security.rolesResolver;
  const mapper = new RpcExceptionMapper(logger);
  /** Streams in flight, ended with an error frame when the server closes. */
  const active = new Set<StreamResponseWriter>();

  const writerConfigs = new Map<StreamFormat, StreamWriterConfig>();
  for (const format of Object.values(StreamFormat)) {
    writerConfigs.set(
      format,
      Object.freeze({
        encoder: frameEncoderFor(format)!,
        keepAliveMs,
        toErrorObject: (error: unknown, method: string) => mapper.toErrorObject(error, method),
        reportCleanupError: (error: unknown, method: string) =>
          logger.warn(`Stream producer of ${method} failed while stopping: ${error instanceof Error ? error.stack : String(error)}`),
      }),
    );
  }

  const sendError = (reply: FastifyReply, exchange: RpcHttpExchange, id: RpcId, error: RpcErrorObject, method?: string): void => {
    reply.header(REQUEST_ID_HEADER, exchange.requestId);
    if (exchange.retryAfter > 0) reply.header('retry-after', String(Math.ceil(exchange.retryAfter)));
    let body: string;
    try {
      body = serializeError(id, error);
    } catch (serializationError) {
      // `data` JSON cannot represent (BigInt, a cycle): -32603 for this call, logged, id kept.
      error = mapper.toErrorObject(serializationError, method);
      body = serializeError(id, error);
    }
    reply.code(preStreamHttpStatus(error.code)).header('content-type', JSON_CONTENT_TYPE).send(body);
  };

  /** `method` is the requested name, for logs (the opening has no context when it failed). */
  const begin = (reply: FastifyReply, exchange: RpcHttpExchange, opening: RpcStreamOpening, method: string | undefined): void => {
    if (opening.error) {
      sendError(reply, exchange, opening.id, opening.error, method);
      return;
    }
    const { ctx, definition } = opening;
    let iterator;
    try {
      iterator = rowIteratorOf(unboxStreamSource(opening.value));
    } catch (error) {
      sendError(reply, exchange, ctx.id ?? null, mapper.toErrorObject(error, ctx.method), ctx.method);
      return;
    }
    const config = writerConfigs.get(definition.stream!.format)!;
    const res = reply.raw;
    reply.hijack();
    // Headers set by hooks (CORS, security plugins) live on the reply until it sends; keep them.
    const headers: OutgoingHttpHeaders = { ...(reply.getHeaders() as OutgoingHttpHeaders), ...streamHeaders };
    headers['content-type'] = config.encoder.contentType;
    headers[REQUEST_ID_HEADER] = exchange.requestId;
    if (opening.streamId !== undefined) headers['x-stream-id'] = opening.streamId;
    if (exchange.deprecations) {
      headers['deprecation'] = 'true';
      headers['x-rpc-deprecated'] = exchange.deprecations.join('; ');
    }
    if (!res.destroyed) res.writeHead(200, headers);
    const writer = new StreamResponseWriter(res, iterator, exchange, ctx.method, config);
    active.add(writer);
    void writer.finished.then(() => active.delete(writer));
    writer.start();
  };

  const open = (
    reply: FastifyReply,
    exchange: RpcHttpExchange,
    opening: RpcStreamOpening | Promise<RpcStreamOpening>,
    method: string | undefined,
  ) => {
    if (!isPromiseLike(opening)) {
      begin(reply, exchange, opening, method);
      return undefined;
    }
    return opening.then((settled) => begin(reply, exchange, settled, method));
  };

  const handlePost = (request: FastifyRequest, reply: FastifyReply): Promise<void> | undefined => {
    const exchange = new RpcHttpExchange(request, reply, requestIdOf(request), rolesResolver);
    const body = parseJsonText(request.body as string | undefined);
    if (body === NOT_JSON) return void sendError(reply, exchange, null, PARSE_ERROR);
    if (Array.isArray(body)) return void sendError(reply, exchange, null, BATCH_REJECTED);
    const method = (body as { method?: unknown } | null)?.method;
    return open(reply, exchange, dispatcher.openStream(body, exchange), typeof method === 'string' ? method : undefined);
  };

  /** `EventSource` can only GET: the envelope comes from the query string. SSE methods only. */
  const handleGet = (request: FastifyRequest, reply: FastifyReply): Promise<void> | undefined => {
    const exchange = new RpcHttpExchange(request, reply, requestIdOf(request), rolesResolver);
    const query = request.query as Record<string, unknown>;
    const { method, params, id } = query;
    if (id !== undefined && typeof id !== 'string') return void sendError(reply, exchange, null, invalid('"id" must appear once'));
    const rpcId: RpcId | undefined = id === undefined ? undefined : INTEGER_ID.test(id) ? Number(id) : id;
    if (typeof method !== 'string' || method === '') {
      return void sendError(reply, exchange, rpcId ?? null, invalid('the "method" query parameter is required, once'));
    }
    const envelope: Record<string, unknown> = { jsonrpc: '2.0', method };
    if (rpcId !== undefined) envelope.id = rpcId;
    if (params !== undefined) {
      const parsed = typeof params === 'string' ? parseJsonText(params) : NOT_JSON;
      if (parsed === NOT_JSON) {
        return void sendError(reply, exchange, rpcId ?? null, { ...PARSE_ERROR, message: 'Parse error: "params" must be URL-encoded JSON' });
      }
      envelope.params = parsed;
    }
    return open(reply, exchange, dispatcher.openStream(envelope, exchange, StreamFormat.Sse), method);
  };


  const methodNotAllowed = (request: FastifyRequest, reply: FastifyReply) => {
    reply.header('allow', 'GET, POST');
    sendEnvelopeError(request, reply, 405, { code: RpcErrorCode.InvalidRequest, message: 'Invalid Request: use POST (or GET for SSE methods)' });
  };

  return (instance: FastifyInstance, _opts, done) => {
    registerJsonRpcBodyParser(instance, bodyLimit);
    instance.setErrorHandler(transportErrorHandler(options.maxRequestSize, logger, 'Stream request'));
    instance.route({ method: 'POST', url: path, bodyLimit, handler: handlePost });
    instance.route({ method: 'GET', url: path, exposeHeadRoute: false, handler: handleGet });
    instance.route({ method: ['PUT', 'PATCH', 'DELETE'], url: path, handler: methodNotAllowed });
    // Open streams would keep `server.close()` waiting for ever: end them, telling the client why.
    instance.addHook('preClose', (hookDone) => {
      for (const writer of active) writer.terminate(SHUTDOWN_ERROR);
      active.clear();
      hookDone();
    });
    done();
  };
}
