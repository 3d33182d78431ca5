import { jest } from '@jest/globals';
import type { DurableStreamEvent } from '@nest-jsonrpc/protocol';
import { StreamStoreUnavailableError } from '../stream-stores/stream-store-unavailable.js';
import type { DurableEventListener, StreamStore } from '../stream-stores/stream-store.js';
import { DurableSubscription, OUTAGE_POLL_MS, REPLAY_PAGE_SIZE, type DurableEventSink } from './durable-subscription.js';
import { StoreAvailability } from './store-availability.js';

const chunk = (id: number): DurableStreamEvent => ({ id, event: 'chunk', data: `{"n":${id}}` });
const done = (id: number): DurableStreamEvent => ({ id, event: 'done', data: '{}' });

/**
 * A store whose reads the test answers by hand (`answerRead`), so a live event can be made to
 * arrive while a replay read is in flight — the interleavings a real store produces under load.
 */
class ScriptedStore {
  /** The last subscriber's listener; `commit` tells every subscriber's. */
  listener: DurableEventListener | undefined;
  readonly listeners = new Set<DurableEventListener>();
  committed: DurableStreamEvent[] = [];
  readonly reads: Array<{ after: number; limit: number; answer: (events: DurableStreamEvent[]) => void; fail: (error: unknown) => void }> = [];
  unsubscribed = false;

  subscribe = async (_id: string, listener: DurableEventListener) => {
    this.listener = listener;
    this.listeners.add(listener);
    return () => {
      this.unsubscribed = true;
      this.listeners.delete(listener);
    };
  };

  read = (_id: string, after: number, limit: number): Promise<DurableStreamEvent[]> =>
    new Promise((resolve, reject) => this.reads.push({ after, limit, answer: resolve, fail: reject }));

  /** With `holdLookups`, lookups wait here until the test answers them (`answerLookup`). */
  holdLookups = false;
  /** The stream's record is gone (a Redis restarted without its data): lookups find nothing. */
  vanished = false;
  readonly lookups: Array<() => void> = [];
  lookup = async () => {
    if (this.holdLookups) await new Promise<void>((resolve) => this.lookups.push(resolve));
    if (this.vanished) return { found: 'none' };
    return { found: 'stream', record: { events: this.committed.length } };
  };
  answerLookup(): void {
    const answer = this.lookups.shift();
    if (!answer) throw new Error('no lookup pending');
    answer();
  }

  /** Fails the oldest pending read as an unreachable store does. */
  failRead(): void {
    const read = this.reads.shift();
    if (!read) throw new Error('no read pending');
    read.fail(new StreamStoreUnavailableError('Redis connection is reconnecting'));
  }

  /** Announces the store lost (`false`) or back (`true`), as RedisStreamStore does. */
  announce(available: boolean): void {
    for (const listener of this.availability) listener(available);
  }

  readonly availability = new Set<(available: boolean) => void>();
  onAvailability = (listener: (available: boolean) => void) => {
    this.availability.add(listener);
    return () => this.availability.delete(listener);
  };

  /** Answers the oldest pending read from what is committed now. */
  answerRead(): void {
    const read = this.reads.shift();
    if (!read) throw new Error('no read pending');
    read.answer(this.committed.filter((e) => e.id > read.after).slice(0, read.limit));
  }

  /** Commits events, then (like every store) tells the listener after the commit. */
  commit(...events: DurableStreamEvent[]): void {
    this.committed.push(...events);
    for (const listener of this.listeners) listener(events);
  }

  asStore(): StreamStore {
    return this as unknown as StreamStore;
  }
}

class RecordingSink implements DurableEventSink {
  readonly delivered: number[] = [];
  finished: { error?: unknown } | undefined;
  accept = true;
  subscription: DurableSubscription | undefined;
  bind(subscription: DurableSubscription): void {
    this.subscription = subscription;
  }
  deliver(events: readonly DurableStreamEvent[]): boolean {
    this.delivered.push(...events.map((e) => e.id));
    return this.accept;
  }
  finish(error?: unknown): void {
    this.finished = { error };
  }
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

async function started(store: ScriptedStore, cursor = 0) {
  const sink = new RecordingSink();
  const subscription = new DurableSubscription(store.asStore(), 's1', cursor, sink);
  sink.bind(subscription);
  void subscription.start();
  await turn();
  return { sink, subscription };
}

describe('DurableSubscription: replay then live, exactly once and in order', () => {
  it('subscribes before replaying, replays after the cursor, then delivers live events', async () => {
    const store = new ScriptedStore();
    store.committed.push(chunk(1), chunk(2), chunk(3));
    const { sink } = await started(store, 1);
    expect(store.listener).toBeDefined();
    expect(store.reads[0]).toMatchObject({ after: 1, limit: REPLAY_PAGE_SIZE });
    store.answerRead();
    await turn();
    expect(sink.delivered).toEqual([2, 3]);
    store.commit(chunk(4), chunk(5));
    expect(sink.delivered).toEqual([2, 3, 4, 5]);
    store.commit(done(6));
    expect(sink.delivered).toEqual([2, 3, 4, 5, 6]);
    expect(sink.finished).toEqual({ error: undefined });
    expect(store.unsubscribed).toBe(true);
  });

  it('an event committed while the first read is in flight (read answered before it) is read again, not "lost"', async () => {
    const store = new ScriptedStore();
    const { sink } = await started(store);
    // The read was answered by the store before the commit, but its answer arrives after the live message.
    const read = store.reads.shift()!;
    store.commit(chunk(1));
    read.answer([]);
    await turn();
    expect(sink.finished).toBeUndefined();
    expect(store.reads).toHaveLength(1);
    store.answerRead();
    await turn();
    expect(sink.delivered).toEqual([1]);
    store.commit(done(2));
    expect(sink.delivered).toEqual([1, 2]);
    expect(sink.finished).toEqual({ error: undefined });
  });

  it('events heard during the replay are not delivered twice: the replay covers them, live duplicates are dropped', async () => {
    const store = new ScriptedStore();
    store.committed.push(chunk(1));
    const { sink } = await started(store);
    store.commit(chunk(2));
    store.answerRead(); // sees 1 and 2
    await turn();
    expect(sink.delivered).toEqual([1, 2]);
    store.listener!([chunk(2)]); // a late duplicate of the live message
    store.commit(chunk(3));
    expect(sink.delivered).toEqual([1, 2, 3]);
  });

  it('a gap in live events (a lost pub/sub message) is read back from the store', async () => {
    const store = new ScriptedStore();
    const { sink } = await started(store);
    store.answerRead();
    await turn();
    store.committed.push(chunk(1)); // committed, but its message never arrived
    store.commit(chunk(2));
    expect(sink.delivered).toEqual([]);
    store.answerRead();
    await turn();
    expect(sink.delivered).toEqual([1, 2]);
  });

  it('a sink that wants no more pauses delivery; resume() continues from the store', async () => {
    const store = new ScriptedStore();
    const { sink, subscription } = await started(store);
    store.answerRead();
    await turn();
    sink.accept = false;
    store.commit(chunk(1));
    store.commit(chunk(2), chunk(3));
    expect(sink.delivered).toEqual([1]);
    sink.accept = true;
    subscription.resume();
    store.answerRead();
    await turn();
    expect(sink.delivered).toEqual([1, 2, 3]);
  });

  it('events known committed before a read began and missing from its answer: the stream was deleted, the sink learns why', async () => {
    const store = new ScriptedStore();
    const { sink } = await started(store);
    store.answerRead();
    await turn();
    store.listener!([chunk(1), chunk(2)].slice(1)); // a jump to 2: a re-read begins knowing 2
    expect(store.reads).toHaveLength(1);
    store.answerRead(); // the store has nothing: deleted under us
    await turn();
    expect(sink.delivered).toEqual([]);
    expect(String(sink.finished?.error)).toContain('durable stream s1 lost events 1..2');
  });

  it('close() before the subscription is registered unsubscribes at once and delivers nothing', async () => {
    const store = new ScriptedStore();
    const sink = new RecordingSink();
    const subscription = new DurableSubscription(store.asStore(), 's1', 0, sink);
    const starting = subscription.start();
    subscription.close();
    await starting;
    expect(store.unsubscribed).toBe(true);
    expect(store.reads).toHaveLength(0);
  });
});

describe('DurableSubscription: a silent live subscription re-reads the store (StreamStore.fanOutRecheckMs)', () => {
  beforeEach(() => jest.useFakeTimers({ doNotFake: ['setImmediate'] }));
  afterEach(() => jest.useRealTimers());
  /** Live, caught up on an empty stream, on a store whose fan-out may lose messages. */
  async function live(fanOutRecheckMs: number) {
    const store = Object.assign(new ScriptedStore(), { fanOutRecheckMs });
    const { sink, subscription } = await started(store);
    store.answerRead();
    await turn();
    return { store, sink, subscription };
  }

  it('a lost *last* message (no later one shows the gap): a live subscription silent for fanOutRecheckMs reads the store', async () => {
    const { store, sink, subscription } = await live(1000);
    jest.advanceTimersByTime(600);
    store.commit(chunk(1)); // heard: the silence starts again
    store.committed.push(chunk(2), done(3)); // committed, their message lost
    jest.advanceTimersByTime(999);
    expect(store.reads).toHaveLength(0); // 999 ms after event 1: not yet
    jest.advanceTimersByTime(1);
    // One probe: is there an event after the last delivered?
    expect(store.reads.map(({ after, limit }) => ({ after, limit }))).toEqual([{ after: 1, limit: 1 }]);
    store.answerRead();
    await turn();
    // There is: the subscription catches up from where it stands.
    expect(store.reads.map(({ after, limit }) => ({ after, limit }))).toEqual([{ after: 1, limit: REPLAY_PAGE_SIZE }]);
    store.answerRead();
    await turn();
    expect(sink.delivered).toEqual([1, 2, 3]);
    expect(sink.finished).toEqual({ error: undefined });
    expect(jest.getTimerCount()).toBe(0); // closed with its stream: nothing left armed
    subscription.close();
  });

  it('a silent live subscription that finds nothing new stays live and re-reads after the next silence; none without fanOutRecheckMs', async () => {
    const { store, sink, subscription } = await live(500);
    jest.advanceTimersByTime(500);
    store.answerRead(); // nothing new
    await turn();
    expect(store.reads).toHaveLength(0);
    jest.advanceTimersByTime(500);
    expect(store.reads).toHaveLength(1);
    store.committed.push(chunk(1));
    store.answerRead(); // the probe finds 1...
    await turn();
    store.answerRead(); // ...and the catch-up reads it
    await turn();
    expect(sink.delivered).toEqual([1]);
    subscription.close();
    expect(jest.getTimerCount()).toBe(0);

    const quiet = new ScriptedStore(); // an in-process fan-out: no re-check
    const other = await started(quiet);
    quiet.answerRead();
    await turn();
    jest.advanceTimersByTime(60_000);
    expect(quiet.reads).toHaveLength(0);
    other.subscription.close();
  });

  it('1,000 silent subscribers of one stream: one probe per silence, not one each; each catches up what all missed', async () => {
    const store = Object.assign(new ScriptedStore(), { fanOutRecheckMs: 1000 });
    const subscribers = [];
    for (let i = 0; i < 1000; i++) subscribers.push(await started(store));
    while (store.reads.length) store.answerRead(); // each replays the empty stream once, then is live
    await turn();
    store.commit(chunk(1));
    expect(subscribers.every(({ sink }) => sink.delivered.join() === '1')).toBe(true);
    jest.advanceTimersByTime(1000);
    expect(store.reads).toHaveLength(1); // one probe for the stream
    store.answerRead(); // nothing new
    await turn();
    jest.advanceTimersByTime(1000);
    expect(store.reads).toHaveLength(1); // the next silence: again one
    store.committed.push(chunk(2), done(3)); // committed, their messages lost
    store.answerRead();
    await turn();
    expect(store.reads).toHaveLength(1000); // found: every subscriber catches up on its own
    while (store.reads.length) store.answerRead();
    await turn();
    expect(subscribers.every(({ sink }) => sink.delivered.join() === '1,2,3' && sink.finished?.error === undefined)).toBe(true);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('a subscriber paused at a silence is skipped, and shares the one probe again once it is live', async () => {
    const store = Object.assign(new ScriptedStore(), { fanOutRecheckMs: 1000 });
    const a = await started(store);
    store.answerRead();
    await turn();
    a.sink.accept = false;
    store.commit(chunk(1)); // delivered; the sink wants no more: paused
    jest.advanceTimersByTime(1000);
    expect(store.reads).toHaveLength(0); // nobody live: no probe
    a.sink.accept = true;
    a.subscription.resume();
    store.answerRead(); // its catch-up: nothing new, live again
    await turn();
    const b = await started(store); // a second subscriber of the same stream
    store.answerRead();
    await turn();
    jest.advanceTimersByTime(1000);
    expect(store.reads.map(({ after, limit }) => ({ after, limit }))).toEqual([{ after: 1, limit: 1 }]); // one probe for both
    store.answerRead();
    await turn();
    a.subscription.close();
    b.subscription.close();
    expect(jest.getTimerCount()).toBe(0);
  });

  it('a subscriber that closes leaves the others re-checked; the last one to close stops the clock', async () => {
    const store = Object.assign(new ScriptedStore(), { fanOutRecheckMs: 1000 });
    const a = await started(store);
    const b = await started(store);
    store.answerRead();
    store.answerRead();
    await turn();
    a.subscription.close();
    jest.advanceTimersByTime(1000);
    expect(store.reads.map(({ after }) => after)).toEqual([0]); // still probed, for b
    store.answerRead();
    await turn();
    b.subscription.close();
    expect(jest.getTimerCount()).toBe(0);
  });
});

describe('DurableSubscription through a store outage', () => {
  async function startedWithAvailability(store: ScriptedStore, graceMs: number) {
    const sink = new RecordingSink();
    const availability = new StoreAvailability(store.asStore());
    const subscription = new DurableSubscription(store.asStore(), 's1', 0, sink, availability, graceMs);
    sink.bind(subscription);
    void subscription.start();
    await turn();
    store.answerRead();
    await turn();
    return { sink, subscription, availability };
  }
  const waitFor = async (check: () => boolean) => {
    for (let i = 0; i < 200 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  };

  it('store announced lost: waits (reading again every poll), then catches up with no gap or repeat the moment it is back', async () => {
    const store = new ScriptedStore();
    const { sink } = await startedWithAvailability(store, 60_000);
    store.commit(chunk(1));
    expect(sink.delivered).toEqual([1]);
    store.announce(false);
    // Committed meanwhile on another instance; its fan-out never arrives.
    store.committed.push(chunk(2), chunk(3));
    await waitFor(() => store.reads.length === 1);
    store.failRead(); // the poll finds the store unreachable
    await turn();
    expect(sink.delivered).toEqual([1]);
    const backAt = Date.now();
    store.announce(true);
    await waitFor(() => store.reads.length === 1);
    expect(Date.now() - backAt).toBeLessThan(OUTAGE_POLL_MS);
    store.answerRead();
    await turn();
    expect(sink.delivered).toEqual([1, 2, 3]);
    // Live again.
    store.commit(chunk(4), done(5));
    expect(sink.delivered).toEqual([1, 2, 3, 4, 5]);
    expect(sink.finished).toEqual({ error: undefined });
  });

  it('back from an outage: events heard while the "did the store keep what was delivered" lookup is in flight are read, not skipped', async () => {
    const store = new ScriptedStore();
    const { sink } = await startedWithAvailability(store, 60_000);
    store.commit(chunk(1));
    store.announce(false);
    await waitFor(() => store.reads.length === 1);
    store.failRead();
    await turn();
    store.holdLookups = true;
    store.announce(true);
    await waitFor(() => store.reads.length === 1);
    store.answerRead(); // nothing new yet
    await waitFor(() => store.lookups.length === 1);
    // The producer's retried commits land now; their messages arrive while the lookup is in flight.
    store.commit(chunk(2));
    store.commit(done(3));
    expect(sink.delivered).toEqual([1]);
    store.answerLookup();
    await waitFor(() => store.reads.length === 1);
    store.answerRead();
    await turn();
    expect(sink.delivered).toEqual([1, 2, 3]);
    expect(sink.finished).toEqual({ error: undefined });
  });

  it('a read that finds the store unreachable waits instead of failing the sink', async () => {
    const store = new ScriptedStore();
    const { sink } = await startedWithAvailability(store, 60_000);
    store.committed.push(chunk(1));
    store.listener!([chunk(2)].map((e) => ({ ...e }))); // a gap: 1 is read back...
    store.committed.push(chunk(2));
    store.failRead(); // ...but the store is gone
    await turn();
    expect(sink.finished).toBeUndefined();
    await waitFor(() => store.reads.length === 1); // the next poll
    store.answerRead();
    await turn();
    expect(sink.delivered).toEqual([1, 2]);
    expect(sink.finished).toBeUndefined();
  });

  it('unreachable for outageGraceMs: the sink is finished with StreamStoreUnavailableError', async () => {
    const store = new ScriptedStore();
    const { sink } = await startedWithAvailability(store, 150);
    store.announce(false);
    await waitFor(() => sink.finished !== undefined);
    expect(sink.finished?.error).toBeInstanceOf(StreamStoreUnavailableError);
    expect(String(sink.finished?.error)).toContain('Stream store unavailable: unreachable for 150 ms');
    expect(store.unsubscribed).toBe(true);
  });

  it('back from an outage with fewer events than it delivered (the store lost them): the sink ends with an error, never a renumbered event', async () => {
    const store = new ScriptedStore();
    const { sink } = await startedWithAvailability(store, 60_000);
    store.commit(chunk(1), chunk(2), chunk(3));
    store.announce(false);
    store.committed.length = 1; // Redis restarted without events 2 and 3
    store.announce(true);
    await waitFor(() => store.reads.length === 1);
    store.answerRead();
    await waitFor(() => sink.finished !== undefined);
    expect(sink.delivered).toEqual([1, 2, 3]);
    expect(String(sink.finished?.error)).toContain('the store has 1 event(s), 3 were delivered: it lost events');
  });

  it('back from an outage with the stream gone altogether (Redis restarted empty): the sink ends with an error instead of waiting forever', async () => {
    const store = new ScriptedStore();
    const { sink } = await startedWithAvailability(store, 60_000);
    store.commit(chunk(1), chunk(2), chunk(3));
    store.announce(false);
    store.committed.length = 0;
    store.vanished = true;
    store.announce(true);
    await waitFor(() => store.reads.length === 1);
    store.answerRead();
    await waitFor(() => sink.finished !== undefined);
    expect(sink.delivered).toEqual([1, 2, 3]);
    expect(String(sink.finished?.error)).toContain('durable stream s1: gone from the store after an outage (3 event(s) delivered)');
  });

  it('a terminal event below what was delivered (the store lost events) ends the sink with an error', async () => {
    const store = new ScriptedStore();
    const { sink } = await startedWithAvailability(store, 60_000);
    store.commit(chunk(1), chunk(2), chunk(3));
    store.listener!([{ id: 2, event: 'error', data: '{"error":{"code":-32603,"message":"Stream store lost events"}}' }]);
    expect(String(sink.finished?.error)).toContain('the store has 2 event(s), 3 were delivered');
  });
});
