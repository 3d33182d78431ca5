/**
 * The streaming endpoint: `POST <stream.path>` (one envelope in, rows out) and
 * `GET <stream.path>?method=&params=&id=` (SSE methods, for `EventSource`). The platform adapter
 * reads the body and refuses what cannot be read, like the `/rpc` routes.
 *
 * Pre-stream failures answer a plain JSON-RPC error envelope with the statuses of docs/streaming.md.
 * Once the handler has returned its iterable the response is taken over, headers go out at once
 * with 200, and `StreamResponseWriter` owns the socket: from then on every error is an in-band frame.
 */
import type { Logger } from '@nestjs/common';
import {
  frameEncoderFor,
  preStreamHttpStatus,
  RpcErrorCode,
  StreamFormat,
  type RpcErrorObject,
  type RpcId,
} from '@nest-jsonrpc/protocol';
import type { RpcContext, RpcHttpExchange } from '../context/rpc-context.js';
import { methodNotAllowed, type HttpRouteGroup } from '../http/http-edge.js';
import { NOT_JSON, PARSE_ERROR, parseJsonText } from '../http/json-text.js';
import type { RpcReplyWriter } from '../http/rpc-reply-writer.js';
import type { ResolvedJsonRpcOptions } from '../options/json-rpc-options.js';
import type { DurableCallStarter } from '../pipeline/durable-call-starter.js';
import { isRejectedCall, type RpcPipeline, type RpcResolvedCall } from '../pipeline/rpc-pipeline.js';
import { isPromiseLike, rowIteratorOf } from '../pipeline/stream-source.js';
import { openStreamResponse } from './stream-head.js';
import { KeepAliveClock } from './stream-output.js';
import { StreamResponseWriter, type StreamWriterConfig } from './stream-writer.js';

const BATCH_REJECTED: RpcErrorObject = Object.freeze({
  code: RpcErrorCode.InvalidRequest,
  message: 'Streaming endpoint accepts only a single request',
});

/** The in-band frame of streams still open when the server closes. */
export const SHUTDOWN_ERROR: RpcErrorObject = Object.freeze({ code: -32000, message: 'Server shutting down' });

/** Integer-looking ids (`id=7`) are numbers, as a JSON-RPC client sending `"id":7` meant; anything else stays a string. */
const INTEGER_ID = /^(?:0|-?[1-9]\d{0,14})$/;

/** What the stream path serves, for the 405s of its other verbs (and of HEAD, see `handleGet`). */
const STREAM_VERBS = { allow: 'GET, POST', hint: 'use POST (or GET for SSE methods)' };

function invalid(reason: string): RpcErrorObject {
  return { code: RpcErrorCode.InvalidRequest, message: `Invalid Request: ${reason}` };
}

/** Where a stream call stands before its first row: its rows, or the error to answer instead. */
type StreamOpening =
  | { readonly ctx: RpcContext; readonly format: StreamFormat; readonly value: unknown; readonly streamId?: string; readonly error?: undefined }
  | { readonly id: RpcId; readonly error: RpcErrorObject; readonly method?: string };

/** What the stream routes read of the resolved options: their section, the write stall bound, and `path` (named in errors). */
export type RpcStreamRouteOptions = Pick<ResolvedJsonRpcOptions, 'path' | 'stream' | 'limits'>;

/**
 * The stream routes: `POST <stream.path>`, and `GET` for SSE methods (the envelope in the query
 * string).
 */
export class RpcStreamRoutes {
  /** Streams in flight, ended with an error frame when the server closes. */
  private readonly active = new Set<StreamResponseWriter>();
  private readonly writerConfigs = new Map<StreamFormat, StreamWriterConfig>();

  constructor(
    private readonly pipeline: RpcPipeline,
    private readonly writer: RpcReplyWriter,
    private readonly options: RpcStreamRouteOptions,
    private readonly logger: Logger,
    private readonly durable: DurableCallStarter | undefined,
  ) {
    const keepAlive = new KeepAliveClock(options.stream.keepAliveMs, frameEncoderFor(StreamFormat.Sse)!.keepAlive!);
    for (const format of Object.values(StreamFormat)) {
      const encoder = frameEncoderFor(format)!;
      this.writerConfigs.set(
        format,
        Object.freeze({
          encoder,
          keepAlive: encoder.keepAlive === undefined ? undefined : keepAlive,
          stalledWriteMs: options.limits.stalledWriteMs,
          toErrorObject: (error: unknown, method: string) => writer.errorOf(error, method),
          errorFrame: (encode: (error: RpcErrorObject) => string, error: RpcErrorObject, method: string) => writer.encodeError(encode, error, method),
          reportCleanupError: (error: unknown, method: string) =>
            logger.warn(`Stream producer of ${method} failed while stopping: ${error instanceof Error ? error.stack : String(error)}`),
        }),
      );
    }
  }

  routes(): HttpRouteGroup {
    const path = this.options.stream.path;
    return {
      name: 'Stream request',
      family: 'rpc',
      body: 'json',
      routes: [
        { method: 'POST', path, handle: (exchange) => this.handlePost(exchange) },
        { method: 'GET', path, handle: (exchange) => this.handleGet(exchange) },
        methodNotAllowed(this.writer, 'rpc', ['PUT', 'PATCH', 'DELETE'], path, STREAM_VERBS),
      ],
      // Open streams would keep `server.close()` waiting for ever: end them, telling the client why.
      onClose: () => {
        for (const streamWriter of this.active) streamWriter.terminate(SHUTDOWN_ERROR);
        this.active.clear();
      },
    };
  }

  private handlePost(exchange: RpcHttpExchange): Promise<void> | undefined {
    const body = parseJsonText(exchange.body);
    if (body === NOT_JSON) return this.sendError(exchange, { id: null, error: PARSE_ERROR });
    if (Array.isArray(body)) return this.sendError(exchange, { id: null, error: BATCH_REJECTED });
    return this.serve(exchange, this.open(body, exchange));
  }

  /**
   * `EventSource` can only GET: the envelope comes from the query string. SSE methods only. HEAD
   * is refused (405, `Allow: GET, POST`) before anything runs: its status only running the method
   * would tell, and a stream started to be thrown away would still have its effects.
   */
  private handleGet(exchange: RpcHttpExchange): Promise<void> | undefined {
    if (exchange.method === 'HEAD') {
      this.writer.sendTransportError(exchange, 'rpc', 'methodNotAllowed', STREAM_VERBS);
      return undefined;
    }
    const { method, params, id } = exchange.query;
    if (id !== undefined && typeof id !== 'string') return this.sendError(exchange, { id: null, error: invalid('"id" must appear once') });
    const rpcId: RpcId | undefined = id === undefined ? undefined : INTEGER_ID.test(id) ? Number(id) : id;
    if (typeof method !== 'string' || method === '') {
      return this.sendError(exchange, { id: rpcId ?? null, error: invalid('the "method" query parameter is required, once') });
    }
    const envelope: Record<string, unknown> = { jsonrpc: '2.0', method };
    if (rpcId !== undefined) envelope.id = rpcId;
    if (params !== undefined) {
      const parsed = typeof params === 'string' ? parseJsonText(params) : NOT_JSON;
      if (parsed === NOT_JSON) {
        return this.sendError(exchange, { id: rpcId ?? null, error: { ...PARSE_ERROR, message: 'Parse error: "params" must be URL-encoded JSON' }, method });
      }
      envelope.params = parsed;
    }
    return this.serve(exchange, this.open(envelope, exchange, StreamFormat.Sse));
  }

  /**
   * The pre-stream phase: envelope, method, then the pipeline (guards, roles, rate limit,
   * interceptors, pipes, params, handler) up to the handler's returned value. `onlyFormat`
   * restricts the methods served (the GET variant serves SSE methods only). Never throws; a
   * request without id is served like one with an id.
   */
  private open(raw: unknown, exchange: RpcHttpExchange, onlyFormat?: StreamFormat): StreamOpening | Promise<StreamOpening> {
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
  private openDurable(call: RpcResolvedCall, format: StreamFormat): Promise<StreamOpening> {
    return this.durable!.startLive(call).then(
      ({ streamId, rows }): StreamOpening => ({ ctx: call.ctx, format, value: rows, streamId }),
      (error): StreamOpening => this.failed(call, error),
    );
  }

  private failed(call: RpcResolvedCall, thrown: unknown): StreamOpening {
    return { id: call.id, error: this.writer.errorOf(thrown, call.ctx.method), method: call.ctx.method };
  }

  private serve(exchange: RpcHttpExchange, opening: StreamOpening | Promise<StreamOpening>): Promise<void> | undefined {
    if (!isPromiseLike(opening)) {
      this.begin(exchange, opening);
      return undefined;
    }
    return opening.then((settled) => this.begin(exchange, settled));
  }

  private begin(exchange: RpcHttpExchange, opening: StreamOpening): void {
    if (opening.error) return this.sendError(exchange, opening);
    const { ctx } = opening;
    let iterator;
    try {
      iterator = rowIteratorOf(opening.value);
    } catch (error) {
      return this.sendError(exchange, { id: ctx.id ?? null, error: this.writer.errorOf(error, ctx.method), method: ctx.method });
    }
    const config = this.writerConfigs.get(opening.format)!;
    const res = openStreamResponse(this.writer, exchange, this.options.stream.headers, config.encoder.contentType, opening.streamId);
    const streamWriter = new StreamResponseWriter(res, iterator, exchange, ctx.method, config);
    this.active.add(streamWriter);
    void streamWriter.finished.then(() => this.active.delete(streamWriter));
    streamWriter.start();
  }

  /** A plain JSON-RPC error envelope with the pre-stream status of docs/streaming.md (rate limit: 400 + `Retry-After`). */
  private sendError(exchange: RpcHttpExchange, failure: { id: RpcId; error: RpcErrorObject; method?: string }): undefined {
    const { text, error } = this.writer.errorEnvelope(failure.id, failure.error, failure.method);
    this.writer.noteError(exchange, error);
    this.writer.send(exchange, preStreamHttpStatus(error.code), text);
    return undefined;
  }
}
