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
import {
  frameEncoderFor,
  preStreamHttpStatus,
  RpcErrorCode,
  RpcHeader,
  StreamFormat,
  type RpcErrorObject,
  type RpcId,
} from '@nest-jsonrpc/protocol';
import { RpcHttpExchange, type RpcContext } from '../context/rpc-context.js';
import { bodyBoundsOf, registerJsonRpcBodyParser } from '../http/json-body-parser.js';
import { NOT_JSON, parseJsonText } from '../http/json-text.js';
import { requestIdOf } from '../http/request-id.js';
import { PARSE_ERROR } from '../http/rpc-http-routes.js';
import type { RpcReplyWriter } from '../http/rpc-reply-writer.js';
import { methodNotAllowed, transportErrorHandler } from '../http/transport-errors.js';
import type { ResolvedJsonRpcOptions } from '../options/json-rpc-options.js';
import type { DurableCallStarter } from '../pipeline/durable-call-starter.js';
import { isRejectedCall, type RpcPipeline, type RpcResolvedCall } from '../pipeline/rpc-pipeline.js';
import { isPromiseLike, rowIteratorOf, unboxStreamSource } from '../pipeline/stream-source.js';
import { StreamResponseWriter, type StreamWriterConfig } from './stream-writer.js';

const BATCH_REJECTED: RpcErrorObject = Object.freeze({
  code: RpcErrorCode.InvalidRequest,
  message: 'Streaming endpoint accepts only a single request',
});

/** The in-band frame of streams still open when the server closes. */
export const SHUTDOWN_ERROR: RpcErrorObject = Object.freeze({ code: -32000, message: 'Server shutting down' });

/** Integer-looking ids (`id=7`) are numbers, as a JSON-RPC client sending `"id":7` meant; anything else stays a string. */
const INTEGER_ID = /^(?:0|-?[1-9]\d{0,14})$/;

function invalid(reason: string): RpcErrorObject {
  return { code: RpcErrorCode.InvalidRequest, message: `Invalid Request: ${reason}` };
}

/** Where a stream call stands before its first row: its rows, or the error to answer instead. */
type StreamOpening =
  | { readonly ctx: RpcContext; readonly format: StreamFormat; readonly value: unknown; readonly streamId?: string; readonly error?: undefined }
  | { readonly id: RpcId; readonly error: RpcErrorObject; readonly method?: string };

/**
 * The stream routes. Small protected methods (throttler style), so a subclass can change how a
 * stream is opened, which headers it carries, or how the GET variant reads its envelope.
 */
export class RpcStreamRoutes {
  /** Streams in flight, ended with an error frame when the server closes. */
  private readonly active = new Set<StreamResponseWriter>();
  private readonly writerConfigs = new Map<StreamFormat, StreamWriterConfig>();

  constructor(
    protected readonly pipeline: RpcPipeline,
    protected readonly writer: RpcReplyWriter,
    protected readonly options: ResolvedJsonRpcOptions,
    protected readonly logger: Logger,
    protected readonly durable: DurableCallStarter | undefined,
  ) {
    for (const format of Object.values(StreamFormat)) {
      this.writerConfigs.set(
        format,
        Object.freeze({
          encoder: frameEncoderFor(format)!,
          keepAliveMs: options.stream.keepAliveMs,
          stalledWriteMs: options.limits.stalledWriteMs,
          toErrorObject: (error: unknown, method: string) => writer.errorOf(error, method),
          reportCleanupError: (error: unknown, method: string) =>
            logger.warn(`Stream producer of ${method} failed while stopping: ${error instanceof Error ? error.stack : String(error)}`),
        }),
      );
    }
    this.handlePost = this.handlePost.bind(this);
    this.handleGet = this.handleGet.bind(this);
  }

  plugin(): FastifyPluginCallback {
    const { options, writer, logger } = this;
    const bounds = bodyBoundsOf(options, writer);
    const path = options.stream.path;
    return (instance: FastifyInstance, _opts, done) => {
      registerJsonRpcBodyParser(instance, bounds);
      instance.setErrorHandler(transportErrorHandler(options.maxRequestSize, writer, logger, 'Stream request'));
      instance.route({ method: 'POST', url: path, bodyLimit: bounds.limit, handler: this.handlePost });
      instance.route({ method: 'GET', url: path, exposeHeadRoute: false, handler: this.handleGet });
      instance.route({ method: ['PUT', 'PATCH', 'DELETE'], url: path, handler: methodNotAllowed(writer, 'GET, POST', 'use POST (or GET for SSE methods)') });
      // Open streams would keep `server.close()` waiting for ever: end them, telling the client why.
      instance.addHook('preClose', (hookDone) => {
        for (const streamWriter of this.active) streamWriter.terminate(SHUTDOWN_ERROR);
        this.active.clear();
        hookDone();
      });
      done();
    };
  }

  protected handlePost(request: FastifyRequest, reply: FastifyReply): Promise<void> | undefined {
    const exchange = this.exchangeOf(request, reply);
    const body = parseJsonText(request.body as string | undefined);
    if (body === NOT_JSON) return this.sendError(reply, exchange, { id: null, error: PARSE_ERROR });
    if (Array.isArray(body)) return this.sendError(reply, exchange, { id: null, error: BATCH_REJECTED });
    return this.serve(reply, exchange, this.open(body, exchange));
  }

  /** `EventSource` can only GET: the envelope comes from the query string. SSE methods only. */
  protected handleGet(request: FastifyRequest, reply: FastifyReply): Promise<void> | undefined {
    const exchange = this.exchangeOf(request, reply);
    const { method, params, id } = request.query as Record<string, unknown>;
    if (id !== undefined && typeof id !== 'string') return this.sendError(reply, exchange, { id: null, error: invalid('"id" must appear once') });
    const rpcId: RpcId | undefined = id === undefined ? undefined : INTEGER_ID.test(id) ? Number(id) : id;
    if (typeof method !== 'string' || method === '') {
      return this.sendError(reply, exchange, { id: rpcId ?? null, error: invalid('the "method" query parameter is required, once') });
    }
    const envelope: Record<string, unknown> = { jsonrpc: '2.0', method };
    if (rpcId !== undefined) envelope.id = rpcId;
    if (params !== undefined) {
      const parsed = typeof params === 'string' ? parseJsonText(params) : NOT_JSON;
      if (parsed === NOT_JSON) {
        return this.sendError(reply, exchange, { id: rpcId ?? null, error: { ...PARSE_ERROR, message: 'Parse error: "params" must be URL-encoded JSON' }, method });
      }
      envelope.params = parsed;
    }
    return this.serve(reply, exchange, this.open(envelope, exchange, StreamFormat.Sse));
  }

  protected exchangeOf(request: FastifyRequest, reply: FastifyReply): RpcHttpExchange {
    return new RpcHttpExchange(request, reply, requestIdOf(request), this.options.security.rolesResolver);
  }

  /**
   * The pre-stream phase: envelope, method, then the pipeline (guards, roles, rate limit,
   * interceptors, pipes, params, handler) up to the handler's returned value. `onlyFormat`
   * restricts the methods served (the GET variant serves SSE methods only). Never throws; a
   * request without id is served like one with an id.
   */
  protected open(raw: unknown, exchange: RpcHttpExchange, onlyFormat?: StreamFormat): StreamOpening | Promise<StreamOpening> {
    const call = this.pipeline.resolve(raw, exchange, 'stream');
    const method = (raw as { method?: unknown } | null)?.method;
    if (isRejectedCall(call)) return { id: call.id, error: call.error, method: typeof method === 'string' ? method : undefined };
    const { definition, ctx, id } = call;
    const stream = definition.stream;
    if (!stream) return { id, error: invalid(`"${ctx.method}" is not a stream method; call it with POST ${this.options.path}`) };
    if (onlyFormat !== undefined && stream.format !== onlyFormat) {
      return { id, error: invalid(`"${ctx.method}" streams ${stream.format}; GET serves only ${onlyFormat} methods, use POST ${this.options.stream.path}`) };
    }
    if (stream.durable) return this.openDurable(call, stream.format);
    let value: unknown;
    try {
      value = this.pipeline.run(call);
    } catch (error) {
      return this.failed(call, error);
    }
    if (isPromiseLike(value)) {
      return Promise.resolve(value).then(
        (settled): StreamOpening => ({ ctx, format: stream.format, value: settled }),
        (error): StreamOpening => this.failed(call, error),
      );
    }
    return { ctx, format: stream.format, value };
  }

  /** A durable method on the stream route: started, then its committed events served live. */
  protected openDurable(call: RpcResolvedCall, format: StreamFormat): Promise<StreamOpening> {
    return this.durable!.startLive(call).then(
      ({ streamId, rows }): StreamOpening => ({ ctx: call.ctx, format, value: rows, streamId }),
      (error): StreamOpening => this.failed(call, error),
    );
  }

  private failed(call: RpcResolvedCall, thrown: unknown): StreamOpening {
    return { id: call.id, error: this.writer.errorOf(thrown, call.ctx.method), method: call.ctx.method };
  }

  private serve(reply: FastifyReply, exchange: RpcHttpExchange, opening: StreamOpening | Promise<StreamOpening>): Promise<void> | undefined {
    if (!isPromiseLike(opening)) {
      this.begin(reply, exchange, opening);
      return undefined;
    }
    return opening.then((settled) => this.begin(reply, exchange, settled));
  }

  private begin(reply: FastifyReply, exchange: RpcHttpExchange, opening: StreamOpening): void {
    if (opening.error) return this.sendError(reply, exchange, opening);
    const { ctx } = opening;
    let iterator;
    try {
      iterator = rowIteratorOf(unboxStreamSource(opening.value));
    } catch (error) {
      return this.sendError(reply, exchange, { id: ctx.id ?? null, error: this.writer.errorOf(error, ctx.method), method: ctx.method });
    }
    const config = this.writerConfigs.get(opening.format)!;
    const res = reply.raw;
    reply.hijack();
    if (!res.destroyed) res.writeHead(200, this.streamHeaders(reply, exchange, config.encoder.contentType, opening.streamId));
    const streamWriter = new StreamResponseWriter(res, iterator, exchange, ctx.method, config);
    this.active.add(streamWriter);
    void streamWriter.finished.then(() => this.active.delete(streamWriter));
    streamWriter.start();
  }

  /** The stream's headers: those hooks set (CORS, security plugins), `stream.headers`, the answer's own. */
  protected streamHeaders(reply: FastifyReply, exchange: RpcHttpExchange, contentType: string, streamId: string | undefined): OutgoingHttpHeaders {
    const headers: OutgoingHttpHeaders = { ...(reply.getHeaders() as OutgoingHttpHeaders), ...this.options.stream.headers, ...this.writer.answerHeaders(exchange) };
    headers['content-type'] = contentType;
    if (streamId !== undefined) headers[RpcHeader.StreamId] = streamId;
    return headers;
  }

  /** A plain JSON-RPC error envelope with the pre-stream status of DESIGN §4 (rate limit: 400 + `Retry-After`). */
  protected sendError(reply: FastifyReply, exchange: RpcHttpExchange, failure: { id: RpcId; error: RpcErrorObject; method?: string }): undefined {
    const { text, error } = this.writer.errorEnvelope(failure.id, failure.error, failure.method);
    this.writer.noteError(exchange, error);
    this.writer.send(reply, exchange, preStreamHttpStatus(error.code), text);
    return undefined;
  }
}
