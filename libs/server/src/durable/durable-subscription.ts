import { isTerminalEvent, type DurableStreamEvent } from '@nest-jsonrpc/protocol';
import type { StreamStore } from '../stream-stores/stream-store.js';

/** Events read from the store per page while catching up. */
export const REPLAY_PAGE_SIZE = 500;

/** Where a subscription's events go: an SSE response, an async iterator, ... */
export interface DurableEventSink {
  /** Called once, before the subscription starts: the sink pauses, resumes and closes it through this. */
  bind(subscription: DurableSubscription): void;
  /** Takes events in id order; returns false when it wants no more until `resume()` is called. */
  deliver(events: readonly DurableStreamEvent[]): boolean;
  /** Nothing more will come: the terminal event was delivered, the stream vanished, or the store failed. */
  finish(error?: unknown): void;
}

/**
 * Delivers one stream's events after a cursor, exactly once and in order, across the hand-off from
 * stored to live events:
 *
 * 1. subscribe to live events first (so nothing committed from now on can be missed);
 * 2. replay from the store after the cursor, page by page, up to what the store holds;
 * 3. go live: a live batch is delivered only if it continues exactly where delivery stands
 *    (ids <= the last delivered are duplicates of the replay and dropped; a jump means events were
 *    missed — committed while not live, or a lost pub/sub message — and they are read back from
 *    the store). Events heard while not live only raise the "latest known" id, so replay keeps
 *    going until it has reached them.
 *
 * A sink that cannot take more pauses delivery; `resume()` continues from the store, so a slow
 * reader costs no memory here however far it falls behind.
 */
export class DurableSubscription {
  private lastDelivered: number;
  private latestKnown: number;
  private state: 'starting' | 'replaying' | 'live' | 'paused' | 'closed' = 'starting';
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly store: StreamStore,
    readonly streamId: string,
    cursor: number,
    private readonly sink: DurableEventSink,
  ) {
    this.lastDelivered = cursor;
    this.latestKnown = cursor;
  }

  async start(): Promise<void> {
    try {
      const unsubscribe = await this.store.subscribe(this.streamId, this.onLive);
      if (this.state === 'closed') {
        unsubscribe();
        return;
      }
      this.unsubscribe = unsubscribe;
    } catch (error) {
      this.fail(error);
      return;
    }
    await this.replay();
  }

  /** The sink can take events again. */
  resume(): void {
    if (this.state === 'paused') void this.replay();
  }

  close(): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    const unsubscribe = this.unsubscribe;
    this.unsubscribe = undefined;
    unsubscribe?.();
  }

  private readonly onLive = (events: readonly DurableStreamEvent[]): void => {
    if (events.length === 0) return;
    const last = events[events.length - 1].id;
    if (last > this.latestKnown) this.latestKnown = last;
    if (this.state !== 'live' || last <= this.lastDelivered) return;
    const first = events[0].id;
    if (first > this.lastDelivered + 1) {
      void this.replay();
      return;
    }
    this.send(first === this.lastDelivered + 1 ? events : events.slice(this.lastDelivered + 1 - first));
  };

  private send(events: readonly DurableStreamEvent[]): void {
    const last = events[events.length - 1];
    this.lastDelivered = last.id;
    const more = this.sink.deliver(events);
    if (isTerminalEvent(last.event)) {
      this.close();
      this.sink.finish();
    } else if (!more && this.state !== 'closed') {
      this.state = 'paused';
    }
  }

  private async replay(): Promise<void> {
    this.state = 'replaying';
    try {
      for (;;) {
        // What was known committed when this read began: a live batch heard while the read is in
        // flight may have been committed after the store answered it, so it is read again.
        const knownBefore = this.latestKnown;
        const events = await this.store.read(this.streamId, this.lastDelivered, REPLAY_PAGE_SIZE);
        if (this.state !== 'replaying') return;
        if (events.length) {
          this.send(events);
          if (this.state !== 'replaying') return;
          if (events.length === REPLAY_PAGE_SIZE) continue;
        }
        if (this.latestKnown <= this.lastDelivered) {
          this.state = 'live';
          return;
        }
        // Events committed before this read began that it did not return: the stream was deleted under us.
        if (events.length === 0 && knownBefore > this.lastDelivered) {
          throw new Error(`durable stream ${this.streamId} lost events ${this.lastDelivered + 1}..${knownBefore}`);
        }
      }
    } catch (error) {
      this.fail(error);
    }
  }

  private fail(error: unknown): void {
    if (this.state === 'closed') return;
    this.close();
    this.sink.finish(error);
  }
}
