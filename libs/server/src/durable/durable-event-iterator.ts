import type { DurableStreamEvent } from '@nest-jsonrpc/protocol';
import { StreamStoreUnavailableError } from '../stream-stores/stream-store-unavailable.js';
import type { DurableSubscription } from './durable-subscription.js';
import { storeUnavailableException } from './store-availability.js';

/** Events buffered before the subscription is paused (it then re-reads from the store when pulled). */
const HIGH_WATER_MARK = 1024;

/**
 * A subscription as an `AsyncIterableIterator` of `{id, event, data}`: for transports that pull
 * (the live `/rpc/stream` route, tests). Ends after the terminal event; `return()` (a `break`)
 * detaches without cancelling the stream.
 *
 * A `DurableEventSink` by shape (`subscribe()` checks it): an `implements` clause would name that
 * internal interface in the public typings, where its members are stripped.
 */
export class DurableEventIterator implements AsyncIterableIterator<DurableStreamEvent> {
  private readonly queue: DurableStreamEvent[] = [];
  private head = 0;
  private finished = false;
  private failure: { error: unknown } | undefined;
  private wake: (() => void) | undefined;
  private subscription: DurableSubscription | undefined;

  /** @internal */
  bind(subscription: DurableSubscription): void {
    this.subscription = subscription;
  }

  /** @internal */
  deliver(events: readonly DurableStreamEvent[]): boolean {
    for (let i = 0; i < events.length; i++) this.queue.push(events[i]);
    this.notify();
    return this.queue.length - this.head < HIGH_WATER_MARK;
  }

  /** @internal */
  finish(error?: unknown): void {
    this.finished = true;
    // An unreachable store ends the iteration with -32603 `Stream store unavailable` (not "Internal error").
    if (error !== undefined) this.failure = { error: error instanceof StreamStoreUnavailableError ? storeUnavailableException(error) : error };
    this.notify();
  }

  async next(): Promise<IteratorResult<DurableStreamEvent>> {
    for (;;) {
      if (this.head < this.queue.length) {
        const value = this.queue[this.head++];
        if (this.head === this.queue.length) {
          this.queue.length = 0;
          this.head = 0;
          this.subscription?.resume();
        }
        return { done: false, value };
      }
      if (this.failure) throw this.failure.error;
      if (this.finished) return { done: true, value: undefined };
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  async return(): Promise<IteratorResult<DurableStreamEvent>> {
    this.subscription?.close();
    this.finished = true;
    this.queue.length = 0;
    this.head = 0;
    this.notify();
    return { done: true, value: undefined };
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
