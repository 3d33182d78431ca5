import type { Logger } from '@nestjs/common';
import {
  CANCELLED_EVENT_DATA,
  DONE_EVENT_DATA,
  encodeErrorRow,
  INTERRUPTED_EVENT_DATA,
  serializeStreamRow,
  type DurableTerminalEventName,
} from '@nest-jsonrpc/protocol';
import type { RpcExceptionMapper } from '../errors/rpc-exception-mapper.js';
import { stopRowIterator, type RowIterator } from '../pipeline/stream-source.js';
import type { PendingDurableEvent, StreamStore } from '../stream-stores/stream-store.js';
import { RpcProgress } from './progress.js';

/** A commit happens when this many events are waiting... */
export const COMMIT_MAX_EVENTS = 512;
/** ...or this many ms after the first one arrived, whichever comes first. */
export const COMMIT_MAX_DELAY_MS = 2;

/** Rows are stored exactly as the live stream route would write them (same escaping of `<`, U+2028, U+2029). */
function toPendingEvent(value: unknown): PendingDurableEvent {
  if (value instanceof RpcProgress) return { id: 0, event: 'progress', data: serializeStreamRow(value.value) };
  return { id: 0, event: 'chunk', data: serializeStreamRow(value) };
}

/** Why a run's signal aborted. */
export class DurableStreamAbortError extends Error {
  constructor(reason: 'cancelled' | 'interrupted') {
    super(reason === 'cancelled' ? 'Durable stream cancelled' : 'Durable stream interrupted (server shutting down)');
    this.name = 'AbortError';
  }
}

/**
 * One durable stream being produced in this process: pulls the handler's iterator in the
 * background and commits its rows to the store in groups (COMMIT_MAX_EVENTS or
 * COMMIT_MAX_DELAY_MS), so one transaction carries many events. Subscribers hear of events from
 * the store, after the commit — never from here.
 *
 * Exactly one terminal event ends a stream: `done` when the iterator is exhausted, `error` when it
 * throws, `cancelled`/`error` when stopped from outside. Whichever terminal the store commits
 * first wins; a run whose commit is refused (someone else ended the stream) just stops.
 */
export class DurableStreamRun {
  private readonly controller = new AbortController();
  private pending: PendingDurableEvent[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** Commits run one after another, in order; this is the last one queued (never rejects). */
  private chain: Promise<void> = Promise.resolve();
  /** The terminal commit, once begun. */
  private ending: Promise<void> | undefined;
  /** No more events are accepted. */
  private stopped = false;
  private released = false;

  constructor(
    readonly id: string,
    readonly method: string,
    private readonly store: StreamStore,
    private readonly mapper: RpcExceptionMapper,
    private readonly logger: Logger,
    /** Called once, when this run no longer produces (its terminal committed, or it was abandoned). */
    private readonly onReleased: (run: DurableStreamRun) => void,
  ) {}

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Starts pulling the producer's rows in the background. */
  start(iterator: RowIterator): void {
    void this.produce(iterator);
  }

  /** Ends the stream from outside: commits what is pending, then `cancelled` (or the interrupted `error`). */
  stop(reason: 'cancelled' | 'interrupted'): Promise<void> {
    if (this.ending) return this.ending;
    this.controller.abort(new DurableStreamAbortError(reason));
    return reason === 'cancelled' ? this.end('cancelled', CANCELLED_EVENT_DATA) : this.end('error', INTERRUPTED_EVENT_DATA);
  }

  /** Someone else ended the stream (a cancel through another instance): stop without writing. */
  abandon(): void {
    this.stopped = true;
    this.pending = [];
    this.clearTimer();
    if (!this.controller.signal.aborted) this.controller.abort(new DurableStreamAbortError('cancelled'));
    this.release();
  }

  private async produce(iterator: RowIterator): Promise<void> {
    let exhausted = false;
    try {
      while (!this.stopped) {
        const step = await iterator.next();
        if (step.done) {
          exhausted = true;
          break;
        }
        if (this.stopped) break;
        this.pending.push(toPendingEvent(step.value));
        if (this.pending.length >= COMMIT_MAX_EVENTS) await this.flush();
        else if (this.timer === undefined) this.timer = setTimeout(this.onTimer, COMMIT_MAX_DELAY_MS);
      }
      if (!this.stopped) await this.end('done', DONE_EVENT_DATA);
    } catch (error) {
      if (!this.stopped) {
        // The one error-frame encoder: integer code, `<` and U+2028/2029 escaped like every row.
        await this.end('error', this.errorRow(error));
      }
    } finally {
      // Let the producer's `finally` blocks run; a failing return() changes nothing for the stream.
      if (!exhausted) stopRowIterator(iterator, () => undefined);
    }
  }

  private errorRow(error: unknown): string {
    const errorObject = this.mapper.toErrorObject(error, this.method);
    try {
      return encodeErrorRow(errorObject);
    } catch (serializationError) {
      // `data` JSON cannot represent: -32603, like a live stream's error frame.
      return encodeErrorRow(this.mapper.toErrorObject(serializationError, this.method));
    }
  }

  private readonly onTimer = (): void => {
    this.timer = undefined;
    void this.flush();
  };

  private clearTimer(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  private flush(): Promise<void> {
    this.clearTimer();
    if (this.pending.length === 0) return this.chain;
    const batch = this.pending;
    this.pending = [];
    return this.commit(batch, false);
  }

  private end(event: DurableTerminalEventName, data: string): Promise<void> {
    if (this.ending) return this.ending;
    this.stopped = true;
    this.clearTimer();
    const batch = this.pending;
    this.pending = [];
    batch.push({ id: 0, event, data });
    this.ending = this.commit(batch, true).then(() => this.release());
    return this.ending;
  }

  private commit(batch: PendingDurableEvent[], terminal: boolean): Promise<void> {
    const next = this.chain.then(() =>
      this.store.append(this.id, batch, terminal, Date.now()).then(
        (outcome) => {
          if (!outcome.ok) this.abandon();
        },
        (error: unknown) => {
          // Nothing of this batch reached anyone (fan-out follows the commit). The stream stays
          // `running` in the store until a recovery marks it interrupted.
          this.logger.error(
            `Durable stream ${this.id} (${this.method}): commit of ${batch.length} event(s) failed; stopping its producer: ${
              error instanceof Error ? error.message : String(error)
            }`,
            error instanceof Error ? error.stack : undefined,
          );
          this.abandon();
        },
      ),
    );
    this.chain = next;
    return next;
  }

  private release(): void {
    if (this.released) return;
    this.released = true;
    this.onReleased(this);
  }
}
