import type * as OtelApi from '@opentelemetry/api';
import { isPromiseLike, RowSource, rowIteratorOf, type RowIterator } from '../pipeline/stream-source.js';
import type { CallRecord, DurableRunRecord } from './rpc-call-tracing.js';
import type { RpcStreamEnding } from './rpc-events.js';

/** What observed rows report to (`RpcCallTelemetry`): how a stream starts, flows and ends. */
export interface RowsObserver {
  streamUnusable(record: CallRecord, thrown: unknown): void;
  streamStarted(record: CallRecord, run: DurableRunRecord | undefined): void;
  streamAbandoned(record: CallRecord): void;
  /** Counts one row of this stream in the metrics; undefined when nothing counts rows (asked once, at the stream's start). */
  rowCounter(record: CallRecord): (() => void) | undefined;
  streamEnded(record: CallRecord, run: DurableRunRecord | undefined, rows: number, ending: RpcStreamEnding, thrown?: unknown): void;
  durableRun(record: CallRecord, streamId: string): DurableRunRecord;
  within<T>(context: OtelApi.Context | undefined, pull: () => T): T;
}

/**
 * A stream method's rows, observed: counted, pulled inside the call's span (a durable run: inside
 * its own span), and watched for how they end — exhausted, failing (an error frame), or stopped
 * early (the client left, the stream was cancelled).
 */
export class ObservedRows extends RowSource {
  constructor(
    private readonly source: unknown,
    private readonly record: CallRecord,
    /** The durable stream these rows feed (undefined: a live stream). */
    private readonly streamId: string | undefined,
    private readonly observer: RowsObserver,
  ) {
    super();
  }

  rowIterator(): RowIterator {
    const { record, observer } = this;
    let inner: RowIterator;
    try {
      inner = rowIteratorOf(this.source);
    } catch (error) {
      observer.streamUnusable(record, error);
      throw error;
    }
    return new ObservedRowIterator(inner, record, this.streamId, observer);
  }
}

class ObservedRowIterator implements RowIterator {
  private rows = 0;
  private started = false;
  private ended = false;
  private run: DurableRunRecord | undefined;
  private context: OtelApi.Context | undefined;
  /** Counts a row in the metrics (undefined: no meter provider when the stream started). */
  private countRow: (() => void) | undefined;

  constructor(
    private readonly inner: RowIterator,
    private readonly record: CallRecord,
    private readonly streamId: string | undefined,
    private readonly observer: RowsObserver,
  ) {
    this.context = record.context;
    this.onStep = this.onStep.bind(this);
    this.onError = this.onError.bind(this);
  }

  next(): IteratorResult<unknown> | Promise<IteratorResult<unknown>> {
    if (this.ended) return this.inner.next();
    const step = this.pull();
    return isPromiseLike(step) ? (step as Promise<IteratorResult<unknown>>).then(this.onStep, this.onError) : this.onStep(step);
  }

  /**
   * The live stream writer's way (`RowIterator.nextUnwatched`): it hands each step back through
   * `stepSettled`/`stepFailed`, so a row costs no promise and no microtask of this iterator's own.
   */
  nextUnwatched(): IteratorResult<unknown> | Promise<IteratorResult<unknown>> {
    return this.ended ? this.inner.next() : this.pull();
  }

  stepSettled(step: IteratorResult<unknown>): void {
    this.onStep(step);
  }

  stepFailed(error: unknown): void {
    if (!this.ended) this.end('error', error);
  }

  /** The inner step (before the end), inside the call's span; a synchronous throw ends the observation here. */
  private pull(): IteratorResult<unknown> | Promise<IteratorResult<unknown>> {
    if (!this.started) {
      this.started = true;
      if (this.streamId !== undefined) {
        this.run = this.observer.durableRun(this.record, this.streamId);
        this.context = this.run.context;
      }
      this.observer.streamStarted(this.record, this.run);
      this.countRow = this.observer.rowCounter(this.record);
    }
    try {
      // No span to pull in (no SDK): no closure per row.
      return this.context === undefined ? this.inner.next() : this.observer.within(this.context, () => this.inner.next());
    } catch (error) {
      return this.onError(error);
    }
  }

  return(): unknown {
    // Stopped before its end: the client left (live), or the stream was cancelled or interrupted (durable).
    // A durable start refused after the handler ran (the running limit) never started: nothing to report.
    if (!this.ended) {
      if (this.started) this.end(this.run ? 'cancelled' : 'client_gone');
      else if (this.streamId === undefined) this.observer.streamAbandoned(this.record);
    }
    this.ended = true;
    return this.inner.return?.();
  }

  private onStep(step: IteratorResult<unknown>): IteratorResult<unknown> {
    if (this.ended) return step;
    if (step.done) this.end('completed');
    else {
      this.rows++;
      this.countRow?.();
    }
    return step;
  }

  private onError(error: unknown): never {
    if (!this.ended) this.end('error', error);
    throw error;
  }

  private end(ending: RpcStreamEnding, thrown?: unknown): void {
    this.ended = true;
    this.observer.streamEnded(this.record, this.run, this.rows, ending, thrown);
  }
}
