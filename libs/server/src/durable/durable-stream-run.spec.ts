import type { Logger } from '@nestjs/common';
import type { DurableStreamEvent } from '@nest-jsonrpc/protocol';
import { RpcExceptionMapper } from '../errors/rpc-exception-mapper.js';
import { StreamStoreUnavailableError } from '../stream-stores/stream-store-unavailable.js';
import type { AppendOutcome, PendingDurableEvent, StreamStore } from '../stream-stores/stream-store.js';
import { DurableStreamRun } from './durable-stream-run.js';
import { StoreAvailability } from './store-availability.js';

/** A store whose appends fail as an unreachable one does while `down`; records every attempt. */
class FlakyStore {
  down = false;
  readonly attempts: PendingDurableEvent[][] = [];
  readonly committed: DurableStreamEvent[] = [];
  private readonly availability = new Set<(available: boolean) => void>();

  append = async (_id: string, events: PendingDurableEvent[], _terminal: boolean): Promise<AppendOutcome> => {
    this.attempts.push(events);
    if (this.down) throw new StreamStoreUnavailableError('Redis connection is reconnecting');
    for (const e of events) {
      e.id = this.committed.length + 1;
      this.committed.push({ ...e });
    }
    return { ok: true, lastId: this.committed.length };
  };

  onAvailability = (listener: (available: boolean) => void) => {
    this.availability.add(listener);
    return () => this.availability.delete(listener);
  };

  setDown(down: boolean): void {
    this.down = down;
    for (const listener of this.availability) listener(!down);
  }

  asStore(): StreamStore {
    return this as unknown as StreamStore;
  }
}

const silent = { warn: () => undefined, error: () => undefined, log: () => undefined } as unknown as Logger;

/** A producer the test feeds: `push(n)` makes rows `{n}` available, `end()` finishes. */
function feed() {
  const rows: number[] = [];
  let ended = false;
  let wake: (() => void) | undefined;
  const iterator = {
    async next(): Promise<IteratorResult<unknown>> {
      while (rows.length === 0 && !ended) await new Promise<void>((resolve) => (wake = resolve));
      if (rows.length) return { value: { n: rows.shift() }, done: false };
      return { value: undefined, done: true };
    },
  };
  const notify = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  return {
    iterator,
    push: (...ns: number[]) => {
      rows.push(...ns);
      notify();
    },
    end: () => {
      ended = true;
      notify();
    },
  };
}

const until = async (check: () => boolean) => {
  for (let i = 0; i < 400 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  if (!check()) throw new Error('timed out');
};

describe('DurableStreamRun through a store outage', () => {
  it('retries the same batch (the same array) until the store is back, then commits everything once, in order', async () => {
    const store = new FlakyStore();
    const run = new DurableStreamRun('s1', 'm', store.asStore(), new RpcExceptionMapper(), silent, () => undefined, new StoreAvailability(store.asStore()), {
      maxBufferedEvents: 1000,
      maxBufferedBytes: 1 << 20,
    });
    const producer = feed();
    run.start(producer.iterator);
    producer.push(1, 2);
    await until(() => store.committed.length === 2);
    store.setDown(true);
    producer.push(3);
    await until(() => store.attempts.length >= 4); // the batch [3] tried, refused, tried again
    producer.push(4, 5); // buffered meanwhile
    const failedBatch = store.attempts.at(-1)!;
    expect(store.attempts.slice(2).every((a) => a === failedBatch)).toBe(true);
    store.setDown(false);
    producer.end();
    await until(() => store.committed.at(-1)?.event === 'done');
    expect(store.committed.map((e) => [e.id, e.event, e.data])).toEqual([
      [1, 'chunk', '{"n":1}'],
      [2, 'chunk', '{"n":2}'],
      [3, 'chunk', '{"n":3}'],
      [4, 'chunk', '{"n":4}'],
      [5, 'chunk', '{"n":5}'],
      [6, 'done', '{}'],
    ]);
  });

  it('past maxBufferedEvents: the producer is aborted, its buffer dropped, and the stream ends with -32603 once the store is back', async () => {
    const store = new FlakyStore();
    const run = new DurableStreamRun('s1', 'm', store.asStore(), new RpcExceptionMapper(), silent, () => undefined, new StoreAvailability(store.asStore()), {
      maxBufferedEvents: 10,
      maxBufferedBytes: 1 << 20,
    });
    const producer = feed();
    run.start(producer.iterator);
    producer.push(1);
    await until(() => store.committed.length === 1);
    store.setDown(true);
    producer.push(...Array.from({ length: 30 }, (_, k) => k + 2));
    await until(() => run.signal.aborted);
    expect(String(run.signal.reason)).toContain('stayed unreachable past the buffer bound');
    store.setDown(false);
    await until(() => store.committed.at(-1)?.event === 'error');
    const events = store.committed;
    expect(events.map((e) => e.id)).toEqual(events.map((_, k) => k + 1));
    expect(events.at(-1)!.data).toBe('{"error":{"code":-32603,"message":"Stream store unavailable"}}');
    // At most the bound of rows (plus the one committed before) ever reached the store.
    expect(events.length - 1).toBeLessThanOrEqual(1 + 10);
    expect(events.slice(0, -1).every((e, k) => e.data === `{"n":${k + 1}}`)).toBe(true);
  });
});
