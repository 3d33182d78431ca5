import type { Logger } from '@nestjs/common';
import {
  CANCELLED_EVENT_DATA,
  DONE_EVENT_DATA,
  encodeErrorRow,
  INTERRUPTED_EVENT_DATA,
  serializeStreamRow,
  STORE_UNAVAILABLE_EVENT_DATA,
  type DurableTerminalEventName,
} from '@nest-jsonrpc/protocol';
import { encodeOrInternal } from '../errors/error-encoding.js';
import type { RpcExceptionMapper } from '../errors/rpc-exception-mapper.js';
import { stopRowIterator, type RowIterator } from '../pipeline/stream-source.js';
import { StreamStoreUnavailableError } from '../stream-stores/stream-store-unavailable.js';
import type { AppendOutcome, PendingDurableEvent, StreamStore } from '../stream-stores/stream-store.js';
import { RpcProgress } from './progress.js';
import type { StoreAvailability } from './store-availability.js';

/** A commit happens when this many events are waiting... */
export const COMMIT_MAX_EVENTS = 512;
/** ...or this many ms after the first one arrived, whichever comes first. */
export const COMMIT_MAX_DELAY_MS = 2;

/** Longest pause between two attempts to commit through a store outage (the store's "back" signal cuts it short). */
const RETRY_MAX_DELAY_MS = 1000;

/** How much a run may hold uncommitted while its store cannot be reached (`durable.maxBufferedEvents`/`Bytes`). */
export interface DurableBufferLimits {
  readonly maxBufferedEvents: number;
  readonly maxBufferedBytes: number;
}

/** What an event weighs in the buffer bound: its JSON text and a little for the rest. */
function weightOf(event: PendingDurableEvent): number {
  return event.data.length + 16;
}

/** Rows are stored exactly as the live stream route would write them (same escaping of `<`, U+2028, U+2029). */
function toPendingEvent(value: unknown): PendingDurableEvent {
  if (value instanceof RpcProgress) return { id: 0, event: 'progress', data: serializeStreamRow(value.value) };
  return { id: 0, event: 'chunk', data: serializeStreamRow(value) };
}

/** Why a run's signal aborted. */
export class DurableStreamAbortError extends Error {
  constructor(reason: 'cancelled' | 'interrupted' | 'store-unavailable') {
    super(
      reason === 'cancelled'
        ? 'Durable stream cancelled'
        : reason === 'interrupted'
          ? 'Durable stream interrupted (server shutting down)'
          : 'Durable stream failed: its store stayed unreachable past the buffer bound',
    );
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
 *
 * Through a store outage the batch that could not be committed is retried (the same array: a
 * store applies it at most once) and the producer's rows keep being pulled into the buffer, up to
 * `maxBufferedEvents`/`maxBufferedBytes` uncommitted. Past that the producer is aborted, what it
 * buffered is dropped (no client ever saw it: fan-out follows the commit) and the stream ends with
 * -32603 `Stream store unavailable` once the store is back. Memory stays bounded however long the
 * outage lasts.
 */
export class DurableStreamRun {
  private readonly controller = new AbortController();
  /** Events waiting for a commit, in order; the terminal one last once queued. */
  private pending: PendingDurableEvent[] = [];
  /** Uncommitted events (pending and in flight) and their weight. */
  private buffered = 0;
  private bufferedBytes = 0;
  private timer: NodeJS.Timeout | undefined;
  /** The commit loop, while it runs. */
  private pumping: Promise<void> | undefined;
  /** The terminal event is the last of `pending`. */
  private terminalQueued = false;
  /** Commits are failing on an unreachable store (and being retried). */
  private retrying = false;
  /** Producers waiting for the commit of a full group (released early when commits start failing). */
  private drainWaiters: Array<() => void> = [];
  /** No more events are accepted. */
  private stopped = false;
  /** No more commits are attempted: someone else ended the stream, or the app is closing. */
  private abandoned = false;
  private released = false;
  private readonly settled: Promise<void>;
  private settle!: () => void;

  constructor(
    readonly id: string,
    readonly method: string,
    private readonly store: StreamStore,
    private readonly mapper: RpcExceptionMapper,
    private readonly logger: Logger,
    /** Called once, when this run no longer produces (its terminal committed, or it was abandoned). */
    private readonly onReleased: (run: DurableStreamRun) => void,
    private readonly availability: StoreAvailability,
    private readonly limits: DurableBufferLimits,
  ) {
    this.settled = new Promise((resolve) => (this.settle = resolve));
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Starts pulling the producer's rows in the background. */
  start(iterator: RowIterator): void {
    void this.produce(iterator);
  }

  /**
   * Ends the stream from outside: commits what is pending, then `cancelled` (or the interrupted
   * `error`). Resolves once that is committed — or given up (`giveUp`).
   */
  stop(reason: 'cancelled' | 'interrupted'): Promise<void> {
    if (!this.controller.signal.aborted) this.controller.abort(new DurableStreamAbortError(reason));
    return reason === 'cancelled' ? this.end('cancelled', CANCELLED_EVENT_DATA) : this.end('error', INTERRUPTED_EVENT_DATA);
  }

  /** Someone else ended the stream (a cancel through another instance): stop without writing. */
  abandon(): void {
    this.stopped = true;
    this.abandoned = true;
    this.pending = [];
    this.clearTimer();
    this.releaseDrainWaiters();
    if (!this.controller.signal.aborted) this.controller.abort(new DurableStreamAbortError('cancelled'));
    this.release();
  }

  /**
   * The app is closing and the store is still unreachable: stop retrying. What was not committed
   * is lost with the process, as in a crash; the stream stays `running` in the store until a
   * recovery marks it interrupted.
   */
  giveUp(): void {
    if (this.released) return;
    this.logger.warn(`Durable stream ${this.id} (${this.method}): closing with ${this.buffered} event(s) not committed (store unreachable)`);
    this.abandon();
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
        const event = toPendingEvent(step.value);
        this.pending.push(event);
        this.buffered++;
        this.bufferedBytes += weightOf(event);
        if (this.buffered > this.limits.maxBufferedEvents || this.bufferedBytes > this.limits.maxBufferedBytes) {
          this.overflow();
          break;
        }
        if (this.pending.length >= COMMIT_MAX_EVENTS) {
          // A full group waits for its commit (backpressure) — except while the store is
          // unreachable: then rows keep coming into the bounded buffer.
          if (!this.retrying) await this.drained();
        } else if (this.timer === undefined) this.timer = setTimeout(this.onTimer, COMMIT_MAX_DELAY_MS);
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

  /** The buffer bound was crossed while the store was unreachable: fail the stream (see the class comment). */
  private overflow(): void {
    const dropped = this.pending.length;
    this.logger.warn(
      `Durable stream ${this.id} (${this.method}): its store stayed unreachable past the buffer bound ` +
        `(${this.limits.maxBufferedEvents} events / ${this.limits.maxBufferedBytes} bytes); ${dropped} uncommitted event(s) dropped, ` +
        'the stream ends with -32603 "Stream store unavailable" once the store is back',
    );
    this.controller.abort(new DurableStreamAbortError('store-unavailable'));
    for (const event of this.pending) {
      this.buffered--;
      this.bufferedBytes -= weightOf(event);
    }
    this.pending = [];
    void this.end('error', STORE_UNAVAILABLE_EVENT_DATA);
  }

  private errorRow(error: unknown): string {
    // `data` JSON cannot represent: -32603, like a live stream's error frame.
    return encodeOrInternal(this.mapper, this.mapper.toErrorObject(error, this.method), this.method, encodeErrorRow).encoded;
  }

  private readonly onTimer = (): void => {
    this.timer = undefined;
    this.pump();
  };

  private clearTimer(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  /** Resolves once everything pending now is committed, or as soon as commits start failing. */
  private drained(): Promise<void> {
    this.clearTimer();
    const drained = new Promise<void>((resolve) => this.drainWaiters.push(resolve));
    this.pump();
    return drained;
  }

  private releaseDrainWaiters(): void {
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const resolve of waiters) resolve();
  }

  private end(event: DurableTerminalEventName, data: string): Promise<void> {
    if (!this.stopped) {
      this.stopped = true;
      this.clearTimer();
      const terminal = { id: 0, event, data };
      this.pending.push(terminal);
      this.buffered++;
      this.bufferedBytes += weightOf(terminal);
      this.terminalQueued = true;
      this.pump();
    }
    return this.settled;
  }

  /** Starts the commit loop unless it runs. */
  private pump(): void {
    if (this.pumping || this.abandoned) {
      if (this.abandoned) this.releaseDrainWaiters();
      return;
    }
    this.pumping = this.commitPending().finally(() => {
      this.pumping = undefined;
      this.releaseDrainWaiters();
      // Rows that arrived during the last commit's await go in the next group.
      if (this.pending.length && !this.abandoned && (this.terminalQueued || this.pending.length >= COMMIT_MAX_EVENTS)) this.pump();
      else if (this.pending.length && this.timer === undefined && !this.abandoned) this.timer = setTimeout(this.onTimer, COMMIT_MAX_DELAY_MS);
    });
  }

  /** Commits `pending` group by group, in order, one commit at a time. */
  private async commitPending(): Promise<void> {
    while (this.pending.length && !this.abandoned) {
      this.clearTimer();
      const all = this.pending.length <= COMMIT_MAX_EVENTS;
      const batch = all ? this.pending : this.pending.slice(0, COMMIT_MAX_EVENTS);
      this.pending = all ? [] : this.pending.slice(COMMIT_MAX_EVENTS);
      const terminal = all && this.terminalQueued;
      const outcome = await this.commitRetrying(batch, terminal);
      for (const event of batch) {
        this.buffered--;
        this.bufferedBytes -= weightOf(event);
      }
      if (outcome === undefined || !outcome.ok) {
        this.abandon();
        return;
      }
      if (terminal) {
        this.release();
        return;
      }
    }
  }

  /**
   * One append, tried again (the same array) for as long as the store is unreachable; undefined
   * when it failed otherwise (logged) or the run was abandoned meanwhile.
   */
  private async commitRetrying(batch: PendingDurableEvent[], terminal: boolean): Promise<AppendOutcome | undefined> {
    for (let attempt = 1; ; attempt++) {
      try {
        const outcome = await this.store.append(this.id, batch, terminal, Date.now());
        this.retrying = false;
        return outcome;
      } catch (error) {
        if (error instanceof StreamStoreUnavailableError && !this.abandoned) {
          this.retrying = true;
          // The producer keeps going into the bounded buffer meanwhile.
          this.releaseDrainWaiters();
          await this.availability.whenBack(Math.min(100 * attempt, RETRY_MAX_DELAY_MS));
          if (!this.abandoned) continue;
        }
        if (this.abandoned) return undefined;
        // Nothing of this batch reached anyone (fan-out follows the commit). The stream stays
        // `running` in the store until a recovery marks it interrupted.
        this.logger.error(
          `Durable stream ${this.id} (${this.method}): commit of ${batch.length} event(s) failed; stopping its producer: ${
            error instanceof Error ? error.message : String(error)
          }`,
          error instanceof Error ? error.stack : undefined,
        );
        return undefined;
      }
    }
  }

  private release(): void {
    if (this.released) return;
    this.released = true;
    this.settle();
    this.onReleased(this);
  }
}
