import type { DurableStreamEvent } from '@nest-jsonrpc/protocol';
import type { DurableEventListener, StreamStore } from '../stream-stores/stream-store.js';
import { DurableSubscription, REPLAY_PAGE_SIZE, type DurableEventSink } from './durable-subscription.js';

const chunk = (id: number): DurableStreamEvent => ({ id, event: 'chunk', data: `{"n":${id}}` });
const done = (id: number): DurableStreamEvent => ({ id, event: 'done', data: '{}' });

/**
 * A store whose reads the test answers by hand (`answerRead`), so a live event can be made to
 * arrive while a replay read is in flight — the interleavings a real store produces under load.
 */
class ScriptedStore {
  listener: DurableEventListener | undefined;
  committed: DurableStreamEvent[] = [];
  readonly reads: Array<{ after: number; limit: number; answer: (events: DurableStreamEvent[]) => void }> = [];
  unsubscribed = false;

  subscribe = async (_id: string, listener: DurableEventListener) => {
    this.listener = listener;
    return () => {
      this.unsubscribed = true;
    };
  };

  read = (_id: string, after: number, limit: number): Promise<DurableStreamEvent[]> =>
    new Promise((resolve) => this.reads.push({ after, limit, answer: resolve }));

  /** Answers the oldest pending read from what is committed now. */
  answerRead(): void {
    const read = this.reads.shift();
    if (!read) throw new Error('no read pending');
    read.answer(this.committed.filter((e) => e.id > read.after).slice(0, read.limit));
  }

  /** Commits events, then (like every store) tells the listener after the commit. */
  commit(...events: DurableStreamEvent[]): void {
    this.committed.push(...events);
    this.listener?.(events);
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
