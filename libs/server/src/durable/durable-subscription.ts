import { isTerminalEvent, type DurableStreamEvent } from '@nest-jsonrpc/protocol';
import { StreamStoreUnavailableError } from '../stream-stores/stream-store-unavailable.js';
import type { StreamStore } from '../stream-stores/stream-store.js';
import type { StoreAvailability } from './store-availability.js';

/** Events read from the store per page while catching up. */
export const REPLAY_PAGE_SIZE = 500;

/** While the store is unreachable, how often a waiting subscription tries to read (its "back" signal cuts it short). */
export const OUTAGE_POLL_MS = 500;

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
 *    going until it has reached them. A stream whose live subscriptions hear nothing for the
 *    store's `fanOutRecheckMs` is read anyway (once for all of them, {@link StreamRecheck}): a lost
 *    *last* message has no later one to reveal it.
 *
 * A sink that cannot take more pauses delivery; `resume()` continues from the store, so a slow
 * reader costs no memory here however far it falls behind.
 *
 * Store outages: when the store announces it is down (or a read finds it unreachable) the
 * subscription waits — reading again every OUTAGE_POLL_MS, and at once when the store announces it
 * is back, which it does only after its fan-out works again — then replays what was committed
 * meanwhile and goes live, with no gap and no duplicate. If the store stays unreachable for
 * `outageGraceMs`, the sink is finished with `StreamStoreUnavailableError`: the client gets a
 * terminal frame and resumes later from its last event id.
 */
export class DurableSubscription {
  private lastDelivered: number;
  private latestKnown: number;
  private state: 'starting' | 'replaying' | 'live' | 'paused' | 'waiting' | 'closed' = 'starting';
  private unsubscribe: (() => void) | undefined;
  private offAvailability: (() => void) | undefined;
  /** Fails the subscription once the store has been unreachable for outageGraceMs. */
  private graceTimer: NodeJS.Timeout | undefined;
  private polling = false;
  /** Set by an outage: the next catch-up checks that the store still holds what was delivered. */
  private recovering = false;
  /** The stream's shared re-check (a store with `fanOutRecheckMs`), joined while live. */
  private recheck: StreamRecheck | undefined;

  constructor(
    private readonly store: StreamStore,
    readonly streamId: string,
    cursor: number,
    private readonly sink: DurableEventSink,
    private readonly availability?: StoreAvailability,
    private readonly outageGraceMs = 30_000,
  ) {
    this.lastDelivered = cursor;
    this.latestKnown = cursor;
  }

  async start(): Promise<void> {
    this.offAvailability = this.availability?.onChange((available) => {
      if (!available && (this.state === 'live' || this.state === 'replaying')) this.wait();
    });
    if (await this.subscribeLive()) await this.replay();
  }

  /** Listens to live events; false when the subscription failed, closed, or waits for the store. */
  private async subscribeLive(): Promise<boolean> {
    try {
      const unsubscribe = await this.store.subscribe(this.streamId, this.onLive);
      if (this.state === 'closed') {
        unsubscribe();
        return false;
      }
      this.unsubscribe = unsubscribe;
      return true;
    } catch (error) {
      if (error instanceof StreamStoreUnavailableError) this.wait();
      else this.fail(error);
      return false;
    }
  }

  /** The sink can take events again. */
  resume(): void {
    if (this.state === 'paused') void this.replay();
  }

  close(): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.clearGrace();
    this.recheck?.leave(this);
    this.offAvailability?.();
    this.offAvailability = undefined;
    const unsubscribe = this.unsubscribe;
    this.unsubscribe = undefined;
    unsubscribe?.();
  }

  /**
   * The store holds fewer events than were delivered: it lost acknowledged writes (a Redis that
   * restarted without them). Resuming cannot be exact any more: the sink ends with an error, and
   * a reconnect with the last id it saw is refused (400: beyond the stream's end).
   */
  private storeWentBack(has: number): Error {
    return new Error(`durable stream ${this.streamId}: the store has ${has} event(s), ${this.lastDelivered} were delivered: it lost events`);
  }

  /** The store is unreachable: wait for it, at most outageGraceMs from now. */
  private wait(): void {
    if (this.state === 'closed') return;
    this.state = 'waiting';
    this.recovering = true;
    if (this.graceTimer === undefined) {
      this.graceTimer = setTimeout(() => {
        this.graceTimer = undefined;
        this.fail(new StreamStoreUnavailableError(`unreachable for ${this.outageGraceMs} ms`));
      }, this.outageGraceMs);
      this.graceTimer.unref();
    }
    if (!this.polling) void this.poll();
  }

  private clearGrace(): void {
    if (this.graceTimer !== undefined) {
      clearTimeout(this.graceTimer);
      this.graceTimer = undefined;
    }
  }

  /** While waiting: read again every OUTAGE_POLL_MS, or as soon as the store is back. */
  private async poll(): Promise<void> {
    this.polling = true;
    try {
      while (this.state === 'waiting') {
        await (this.availability?.whenBack(OUTAGE_POLL_MS) ?? new Promise((resolve) => setTimeout(resolve, OUTAGE_POLL_MS)));
        if (this.state !== 'waiting') return;
        if (!this.unsubscribe && !(await this.subscribeLive())) continue;
        await this.replay();
      }
    } finally {
      this.polling = false;
    }
  }

  private readonly onLive = (events: readonly DurableStreamEvent[]): void => {
    if (events.length === 0) return;
    const lastEvent = events[events.length - 1];
    const last = lastEvent.id;
    if (last > this.latestKnown) this.latestKnown = last;
    // A stream that ends before events already delivered: its store lost them (see storeWentBack).
    if (last < this.lastDelivered && isTerminalEvent(lastEvent.event)) return this.fail(this.storeWentBack(last));
    if (this.state !== 'live' || last <= this.lastDelivered) return;
    const first = events[0].id;
    if (first > this.lastDelivered + 1) {
      void this.replay();
      return;
    }
    this.send(first === this.lastDelivered + 1 ? events : events.slice(this.lastDelivered + 1 - first));
  };

  /** Live: the stream's silence before its next re-read starts now (see `StreamStore.fanOutRecheckMs`). */
  private armRecheck(): void {
    if (this.recheck === undefined) {
      if (!this.store.fanOutRecheckMs) return;
      this.recheck = StreamRecheck.of(this.store, this.streamId);
    }
    this.recheck.heard(this);
  }

  /** @internal for {@link StreamRecheck}: whether live events are delivered as heard. */
  get isLive(): boolean {
    return this.state === 'live';
  }

  /** @internal for {@link StreamRecheck}: the id of the last event delivered. */
  get position(): number {
    return this.lastDelivered;
  }

  /** @internal for {@link StreamRecheck}: the store holds events this live subscription has not heard. */
  catchUp(): void {
    // Not live: a catch-up, a pause or an outage reads the store anyway, and goes live (re-joining) after.
    if (this.state === 'live') void this.replay();
  }

  private send(events: readonly DurableStreamEvent[]): void {
    const last = events[events.length - 1];
    if (this.state === 'live') this.armRecheck();
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
          // Back from an outage: the store must still hold what was delivered before it.
          if (this.recovering) {
            this.recovering = false;
            const found = await this.store.lookup(this.streamId);
            if (this.state !== 'replaying') return;
            if (found.found === 'stream' && found.record.events < this.lastDelivered) throw this.storeWentBack(found.record.events);
            // Gone altogether (a Redis restarted without its data): nothing will ever come; end rather than wait forever.
            if (found.found !== 'stream') throw new Error(`durable stream ${this.streamId}: gone from the store after an outage (${this.lastDelivered} event(s) delivered)`);
            // Events heard while the lookup was in flight were committed after the read: read again.
            if (this.latestKnown > this.lastDelivered) continue;
          }
          // Caught up. Live only once the store says its fan-out works again; until then, keep polling.
          if (this.availability && !this.availability.available) {
            if (this.polling) this.state = 'waiting';
            else this.wait();
            return;
          }
          this.clearGrace();
          this.state = 'live';
          this.armRecheck();
          return;
        }
        // Events committed before this read began that it did not return: the stream was deleted under us.
        if (events.length === 0 && knownBefore > this.lastDelivered) {
          throw new Error(`durable stream ${this.streamId} lost events ${this.lastDelivered + 1}..${knownBefore}`);
        }
      }
    } catch (error) {
      if (error instanceof StreamStoreUnavailableError && this.state === 'replaying') this.wait();
      else this.fail(error);
    }
  }

  private fail(error: unknown): void {
    if (this.state === 'closed') return;
    this.close();
    this.sink.finish(error);
  }
}

/** What {@link StreamRecheck} needs of a subscription. */
interface RecheckMember {
  readonly isLive: boolean;
  readonly position: number;
  catchUp(): void;
}

/**
 * The fan-out re-check of one stream of one store, shared by this process's live subscriptions of
 * it: one timer, refreshed by every delivery, and once the stream has been silent for the store's
 * `fanOutRecheckMs`, **one** read of the store after the furthest position delivered — not one
 * read per subscriber (1,000 idle subscribers of a stream would be 1,000 reads per interval).
 * Live subscriptions of one stream hear the same messages, so at a silence they stand at the same
 * event: an event past it is one every live subscription missed, and each catches up from its
 * own position (as does any left behind the others). A subscription that is not live at a check
 * (paused, catching up, waiting for the store) is skipped, and restarts the clock when it goes
 * live again; it leaves when it closes, and the last to leave removes the stream's entry.
 */
class StreamRecheck {
  private static readonly byStore = new WeakMap<StreamStore, Map<string, StreamRecheck>>();

  static of(store: StreamStore, streamId: string): StreamRecheck {
    let streams = StreamRecheck.byStore.get(store);
    if (streams === undefined) StreamRecheck.byStore.set(store, (streams = new Map()));
    let recheck = streams.get(streamId);
    if (recheck === undefined) streams.set(streamId, (recheck = new StreamRecheck(store, streamId, streams)));
    return recheck;
  }

  /** Every subscription of the stream that joined and has not closed, live or not (a paused one goes live again). */
  private readonly members = new Set<RecheckMember>();
  private timer: NodeJS.Timeout | undefined;
  private checking = false;

  private constructor(
    private readonly store: StreamStore,
    private readonly streamId: string,
    private readonly streams: Map<string, StreamRecheck>,
  ) {}

  /** `member` is live and just delivered (or went live): the stream's silence starts now. */
  heard(member: RecheckMember): void {
    this.members.add(member);
    if (this.timer !== undefined) this.timer.refresh();
    else if (!this.checking) this.arm();
  }

  /** `member` closed. */
  leave(member: RecheckMember): void {
    this.members.delete(member);
    if (this.members.size !== 0) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.checking && this.streams.get(this.streamId) === this) this.streams.delete(this.streamId);
  }

  private arm(): void {
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.check();
    }, this.store.fanOutRecheckMs);
    this.timer.unref();
  }

  private async check(): Promise<void> {
    let furthest = -1;
    for (const member of this.members) if (member.isLive) furthest = Math.max(furthest, member.position);
    // None live (paused, catching up, waiting for the store): each re-arms when it goes live.
    if (furthest < 0) return;
    this.checking = true;
    let missed = false;
    try {
      missed = (await this.store.read(this.streamId, furthest, 1)).length !== 0;
    } catch {
      // Unreachable: the subscriptions' outage path takes over. Any other failure: the next real read meets it.
    } finally {
      this.checking = false;
    }
    let live = false;
    for (const member of [...this.members]) {
      if (!member.isLive) continue;
      if (missed || member.position < furthest) member.catchUp();
      else live = true;
    }
    if (this.members.size === 0) {
      if (this.streams.get(this.streamId) === this) this.streams.delete(this.streamId);
    } else if (live && this.timer === undefined) {
      this.arm();
    }
  }
}
