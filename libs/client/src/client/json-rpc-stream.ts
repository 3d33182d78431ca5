import { ResultChunkAssembler } from '../chunks/result-chunk-assembler.js';
import { isResultChunk } from '../chunks/result-chunk.js';
import { decoderForContentType, STREAM_MEDIA_TYPES } from '../decoding/decoder-for-content-type.js';
import type { StreamEndReason, StreamFrame } from '../decoding/stream-frame.js';
import {
  JsonRpcError,
  JsonRpcProtocolError,
  JsonRpcStreamTruncatedError,
  ResultChunkError,
} from '../errors/client-errors.js';
import { describeCause, RequestScope } from '../transport/request-scope.js';
import type { ExchangeSettings } from './exchange-settings.js';
import { failedAnswer } from './failed-answer.js';

/** What one stream request needs; built by JsonRpcClient.stream(). */
export interface StreamRequest {
  readonly url: string;
  readonly id: number;
  readonly body: string;
  readonly headers: () => Promise<Headers>;
  readonly signal: AbortSignal | undefined;
  readonly settings: ExchangeSettings;
}

export interface CollectResultOptions {
  /** Which result to collect; by default the stream's only one (a second result_id is an error). */
  resultId?: string;
  /** Bound on the assembled result, in bytes (ResultChunkAssembler `maxBytes`). */
  maxBytes?: number;
  /** Called with every row that is not a `result_chunk` of the collected result. */
  onRow?: (row: unknown) => void;
}

/**
 * The rows of one `POST <streamUrl>` call, as an async iterable. The request is sent on the first
 * `next()` (so an error before the stream starts rejects that `next()`); rows are yielded as they
 * are decoded; an in-band error frame throws JsonRpcError after the rows before it; a body that
 * ends without its end marker, or a dropped connection, throws JsonRpcStreamTruncatedError.
 * `break`, `return()` or the caller's signal close the connection, so the server sees the client
 * leave. Iterate it once.
 */
export class JsonRpcStream<T = unknown> implements AsyncIterableIterator<T> {
  /** The response headers, once the stream has started (e.g. `X-Stream-Id` of a durable stream). */
  headers: Headers | undefined;
  /** How it ended: `end` (SSE `end` or the JSON array's `]`), `done`/`cancelled` (durable), `eof` (NDJSON). */
  endReason: StreamEndReason | undefined;
  /** Rows yielded so far. */
  rowCount = 0;
  private readonly generator: AsyncGenerator<T, undefined, undefined>;
  private scope: RequestScope | undefined;

  /** @internal made by `JsonRpcClient.stream()`. */
  constructor(private readonly request: StreamRequest) {
    this.generator = this.run();
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<T, undefined>> {
    return this.generator.next();
  }

  /** Leaves the stream: the connection is closed at once, even while a `next()` is pending. */
  return(): Promise<IteratorResult<T, undefined>> {
    this.scope?.abort();
    return this.generator.return(undefined);
  }

  throw(error?: unknown): Promise<IteratorResult<T, undefined>> {
    this.scope?.abort();
    return this.generator.throw(error);
  }

  /** Reads the whole stream into an array (for short streams and tests). */
  async toArray(): Promise<T[]> {
    const rows: T[] = [];
    for await (const row of this) rows.push(row);
    return rows;
  }

  /** Reads the whole stream and reassembles its `result_chunk` rows into bytes. */
  async collectResult(options: CollectResultOptions = {}): Promise<Uint8Array> {
    const { assembler, resultId } = await this.collect(options);
    return assembler.assemble(resultId);
  }

  /** Reads the whole stream and reassembles its `result_chunk` rows into text. */
  async collectResultText(options: CollectResultOptions = {}): Promise<string> {
    const { assembler, resultId } = await this.collect(options);
    return assembler.assembleText(resultId);
  }

  private async collect(options: CollectResultOptions): Promise<{ assembler: ResultChunkAssembler; resultId: string }> {
    const assembler = new ResultChunkAssembler({ maxBytes: options.maxBytes });
    let resultId = options.resultId;
    for await (const row of this) {
      if (!isResultChunk(row)) {
        options.onRow?.(row);
        continue;
      }
      resultId ??= row.result_id;
      if (row.result_id === resultId) assembler.push(row);
      else if (options.resultId === undefined) {
        throw new ResultChunkError(`a second result in the stream (the first was "${resultId}"); pass resultId to pick one`, row.result_id, row.chunk_seq);
      } else options.onRow?.(row);
    }
    if (resultId === undefined) throw new ResultChunkError('the stream ended without any result_chunk row', undefined, undefined);
    return { assembler, resultId };
  }

  private async *run(): AsyncGenerator<T, undefined, undefined> {
    const { url, settings } = this.request;
    const scope = new RequestScope(url, this.request.signal, settings.idleTimeoutMs, true);
    this.scope = scope;
    let drained = false;
    try {
      const headers = await this.request.headers();
      let res: Response;
      try {
        res = await settings.fetch(url, { method: 'POST', headers, body: this.request.body, signal: scope.signal });
      } catch (cause) {
        throw scope.failure(cause, 'POST');
      }
      scope.touch();
      this.headers = res.headers;
      const contentType = res.headers.get('content-type');
      if (!res.ok) throw await failedAnswer(res, url, settings.maxResponseBytes, scope);
      if (res.status === 204 || res.body === null) {
        throw new JsonRpcProtocolError(`expected a stream, got HTTP ${res.status} without a body`, { url, status: res.status, contentType });
      }
      const decoder = decoderForContentType(contentType, { maxFrameBytes: settings.maxFrameBytes, url, contentType });
      if (decoder === undefined) {
        throw new JsonRpcProtocolError(
          `expected a stream (${Object.values(STREAM_MEDIA_TYPES).join(', ')}), got Content-Type ${JSON.stringify(contentType)}`,
          { url, status: res.status, contentType },
        );
      }
      const reader = res.body.getReader();
      const frames: StreamFrame[] = [];
      for (;;) {
        let step: ReadableStreamReadResult<Uint8Array>;
        try {
          step = await reader.read();
        } catch (cause) {
          if (scope.aborted) throw scope.reason;
          throw new JsonRpcStreamTruncatedError(
            `stream from ${url} cut off after ${this.rowCount} row(s): ${describeCause(cause)}`,
            url,
            this.rowCount,
            { cause },
          );
        }
        let failure: unknown;
        try {
          if (step.done) {
            drained = true;
            decoder.finish(frames);
          } else {
            scope.touch();
            decoder.decode(step.value, frames);
          }
        } catch (error) {
          failure = error;
        }
        // Frames decoded before a failure in the same chunk are delivered first, in order.
        for (let i = 0; i < frames.length; i++) {
          const frame = frames[i];
          if (frame.type === 'row') {
            this.rowCount++;
            yield frame.value as T;
          } else if (frame.type === 'error') {
            throw new JsonRpcError(frame.error, this.request.id, res.status);
          } else {
            this.endReason = frame.reason;
            return undefined;
          }
        }
        frames.length = 0;
        if (failure !== undefined) throw failure;
        if (step.done) {
          this.endReason = 'eof';
          return undefined;
        }
      }
    } finally {
      // Left before the body ended (break, error frame, garbage, abort): close the connection.
      if (!drained) scope.abort();
      scope.dispose();
    }
  }
}
