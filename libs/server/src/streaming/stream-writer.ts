/**
 * Writes one stream's rows to a Node `ServerResponse` as they are produced.
 *
 * - Rows produced in the same turn of the event loop share one socket write: they are encoded
 *   into `pending` and written on `setImmediate`, or as soon as `pending` reaches
 *   `COALESCE_LIMIT` (the loop then yields to the event loop, so even an endless synchronous
 *   producer cannot starve other requests).
 * - Backpressure: once `res.write()` returns false the iterator is not pulled again until
 *   'drain', so a client that stops reading costs the socket buffers plus one chunk, no more.
 * - Cancellation: on 'close' before the end, the call's signal is aborted, the iterator's
 *   `return()` runs at once (a generator's `finally` blocks execute), timers and listeners go,
 *   and nothing more is written.
 * - SSE keep-alive: a comment once nothing has been written for about `stream.keepAliveMs`
 *   (`StreamOutput`, the socket side shared with durable attaches).
 *
 * Knows nothing of Nest or the platform: it sees a ServerResponse, a row iterator and an encoder.
 */
import type { ServerResponse } from 'node:http';
import { encodeErrorObject, serializeStreamRow, type RpcErrorObject, type SseEventFields, type StreamFrameEncoder } from '@nest-jsonrpc/protocol';
import { stopRowIterator, type RowIterator } from '../pipeline/stream-source.js';
import { StreamOutput, type KeepAliveClock } from './stream-output.js';

/**
 * A row that is already JSON text and may carry SSE `id:`/`event:` fields (durable streams served
 * live). The SSE encoder writes the fields; NDJSON and JSON array write the JSON alone.
 */
export class EventRow {
  constructor(
    readonly json: string,
    readonly fields?: SseEventFields,
  ) {}
}

/**
 * An error frame whose error object is already JSON (a stored durable `error` event): the stream
 * ends with it, in the format's own error frame, without parsing and re-serialising it.
 */
export class ErrorFrameRow {
  constructor(readonly errorJson: string) {}
}

/** Bytes (UTF-16 units, close enough) of encoded frames gathered before a write is forced. */
export const COALESCE_LIMIT = 32 * 1024;

/** Settings shared by every stream of one format; built once at startup. */
export interface StreamWriterConfig {
  readonly encoder: StreamFrameEncoder;
  /** The keep-alive comments of a format that has them (SSE); none: no comments. */
  readonly keepAlive?: KeepAliveClock;
  /** A client that has read nothing for this long while writes wait is dropped (`WriteStallTimer`); 0 = never. */
  readonly stalledWriteMs: number;
  /** The error frame for what the producer threw (and where it gets logged). */
  toErrorObject(error: unknown, method: string): RpcErrorObject;
  /** The frame of `error`, or of the -32603 it becomes when JSON cannot carry it. */
  errorFrame(encode: (error: RpcErrorObject) => string, error: RpcErrorObject, method: string): string;
  /** A producer's `return()` that failed: nothing to tell the client, so it is only logged. */
  reportCleanupError(error: unknown, method: string): void;
}

/** Whoever owns the call's AbortSignal (the HTTP exchange). */
export interface StreamAbortTarget {
  abort(reason: unknown): void;
}

const enum WriterState {
  Open,
  /** Ended by us: last frame written, `res.end()` called. */
  Ended,
  /** The client went away first. */
  Aborted,
}

type StepResult = IteratorResult<unknown> | Promise<IteratorResult<unknown>>;

function isPromise(value: StepResult): value is Promise<IteratorResult<unknown>> {
  return typeof (value as Promise<unknown>).then === 'function';
}

export class StreamResponseWriter {
  private state = WriterState.Open;
  private pending = '';
  private rows = 0;
  /** The iterator finished on its own (done, or threw): `return()` must not be called. */
  private iteratorFinished = false;
  private flushImmediate: NodeJS.Immediate | undefined;
  /** Resumes the pull loop when it waits for the socket. */
  private wake: (() => void) | undefined;
  private readonly done: Promise<void>;
  private resolveDone!: () => void;
  private readonly output: StreamOutput;

  constructor(
    private readonly res: ServerResponse,
    private readonly iterator: RowIterator,
    private readonly abortTarget: StreamAbortTarget,
    /** Method name, for logs. */
    private readonly method: string,
    private readonly config: StreamWriterConfig,
  ) {
    this.flush = this.flush.bind(this);
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
    this.output = new StreamOutput(res, this, config.stalledWriteMs, config.keepAlive);
  }

  /** Settles when the stream has ended or been aborted; never rejects. */
  get finished(): Promise<void> {
    return this.done;
  }

  /**
   * Starts streaming; headers must already be set with `writeHead`. Returns at once: the rows are
   * pumped in the background and `finished` settles at the end.
   */
  start(): void {
    const res = this.res;
    if (res.destroyed) {
      // The client left while the handler was being called.
      this.abort();
      return;
    }
    this.output.start();
    const encoder = this.config.encoder;
    if (encoder.preamble) this.output.write(encoder.preamble);
    else res.flushHeaders();
    void this.pump();
  }

  /** Ends an open stream from the server side (shutdown) with an in-band error frame. */
  terminate(error: RpcErrorObject): void {
    if (this.state !== WriterState.Open) return;
    this.abortTarget.abort(new Error(error.message));
    this.stopIterator();
    this.end(this.errorFrame(error));
  }

  private async pump(): Promise<void> {
    const iterator = this.iterator;
    const unwatched = iterator.nextUnwatched !== undefined;
    const encoder = this.config.encoder;
    try {
      for (;;) {
        while (this.output.blocked || this.pending.length >= COALESCE_LIMIT) {
          await this.socketReady();
          if (this.state !== WriterState.Open) return;
        }
        let step: StepResult;
        try {
          // An observed stream's steps are handed back rather than watched by a promise per row.
          step = unwatched ? iterator.nextUnwatched!() : iterator.next();
          if (isPromise(step)) step = await step;
        } catch (error) {
          this.iteratorFinished = true;
          if (unwatched) iterator.stepFailed!(error);
          throw error;
        }
        if (unwatched) iterator.stepSettled!(step);
        if (this.state !== WriterState.Open) return;
        if (step.done) {
          this.iteratorFinished = true;
          this.end('');
          return;
        }
        const row = step.value;
        if (row instanceof ErrorFrameRow) {
          this.stopIterator();
          this.end(encoder.error(row.errorJson, this.rows));
          return;
        }
        this.pending += row instanceof EventRow ? encoder.row(row.json, this.rows++, row.fields) : encoder.row(serializeStreamRow(row), this.rows++);
        if (this.flushImmediate === undefined) this.flushImmediate = setImmediate(this.flush);
      }
    } catch (error) {
      // After the client left, a producer failing (typically with the AbortError of ctx.signal)
      // is the expected way for it to stop: nobody to tell, nothing to log.
      if (this.state !== WriterState.Open) return;
      const errorObject = this.config.toErrorObject(error, this.method);
      if (!this.iteratorFinished) this.stopIterator();
      this.end(this.errorFrame(errorObject));
    }
  }

  /**
   * The in-band error frame. An `RpcException` whose `data` JSON cannot represent (BigInt, a
   * cycle) would make the encoder throw and leave the client waiting for an end that never
   * comes: it becomes -32603 instead (logged by `toErrorObject`), like an unserialisable row.
   */
  private errorFrame(errorObject: RpcErrorObject): string {
    const { encoder } = this.config;
    return this.config.errorFrame((e) => encoder.error(encodeErrorObject(e), this.rows), errorObject, this.method);
  }

  /** Resolves once pending frames are written and the socket takes more. */
  private socketReady(): Promise<void> {
    return new Promise((resolve) => (this.wake = resolve));
  }

  private resume(): void {
    const wake = this.wake;
    if (wake) {
      this.wake = undefined;
      wake();
    }
  }

  private flush(): void {
    this.flushImmediate = undefined;
    if (this.state !== WriterState.Open || this.pending === '') return;
    const chunk = this.pending;
    this.pending = '';
    if (this.output.write(chunk)) this.resume();
  }

  /** `StreamOutput`: the socket took what was waiting. */
  onDrain(): void {
    if (this.state === WriterState.Open) this.resume();
  }

  /** `StreamOutput`: the response closed. */
  onClose(): void {
    if (this.state === WriterState.Open) this.abort();
  }

  private end(lastFrames: string): void {
    this.state = WriterState.Ended;
    this.clearFlush();
    const chunk = this.pending + lastFrames + this.config.encoder.epilogue;
    this.pending = '';
    this.output.end(chunk);
    this.resume();
    this.resolveDone();
  }

  private abort(): void {
    this.state = WriterState.Aborted;
    this.clearFlush();
    this.pending = '';
    this.abortTarget.abort(new Error('Client disconnected'));
    if (!this.iteratorFinished) this.stopIterator();
    this.resume();
    this.resolveDone();
  }

  private clearFlush(): void {
    if (this.flushImmediate !== undefined) {
      clearImmediate(this.flushImmediate);
      this.flushImmediate = undefined;
    }
  }

  /** Runs the producer's `return()` (a generator's `finally`); its failures are only logged. */
  private stopIterator(): void {
    this.iteratorFinished = true;
    stopRowIterator(this.iterator, (error) => this.config.reportCleanupError(error, this.method));
  }
}
