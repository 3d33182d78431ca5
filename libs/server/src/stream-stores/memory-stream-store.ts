import {
  CANCELLED_EVENT_DATA,
  STATUS_OF_TERMINAL,
  type DurableStreamEvent,
  type DurableStreamStatus,
  type DurableTerminalEventName,
} from '@nest-jsonrpc/protocol';
import { LocalEventHub } from './local-event-hub.js';
import type {
  AppendOutcome,
  DurableStreamRecord,
  CreateOutcome,
  DurableEventListener,
  LookupOutcome,
  NewDurableStream,
  PendingDurableEvent,
  StreamStore,
  StreamStoreHealth,
} from './stream-store.js';

interface MemoryStream {
  record: { -readonly [K in keyof DurableStreamRecord]: DurableStreamRecord[K] };
  events: DurableStreamEvent[];
}

/**
 * Keeps streams in this process's memory: for tests and single-process apps that accept losing
 * streams on restart. Two app instances in one process may share one instance (it then behaves
 * like a shared store, cancellation included).
 */
export class MemoryStreamStore implements StreamStore {
  private readonly streams = new Map<string, MemoryStream>();
  private readonly tombstones = new Map<string, { owner: string | null; forgetAt: number }>();
  private readonly hub = new LocalEventHub();

  async open(): Promise<void> {}

  async close(): Promise<void> {}

  /** Always up: it lives in this process. */
  async checkHealth(): Promise<StreamStoreHealth> {
    return { up: true, kind: 'memory', latencyMs: 0 };
  }

  async create(stream: NewDurableStream): Promise<CreateOutcome> {
    const { total, perUser } = stream.limits;
    if (total !== undefined || perUser !== undefined) {
      let all = 0;
      let mine = 0;
      for (const s of this.streams.values()) {
        if (s.record.status !== 'running') continue;
        all++;
        if (s.record.owner === stream.owner) mine++;
      }
      if (total !== undefined && all >= total) return { ok: false, scope: 'total', limit: total };
      if (perUser !== undefined && mine >= perUser) return { ok: false, scope: 'perUser', limit: perUser };
    }
    this.streams.set(stream.id, {
      record: {
        id: stream.id,
        method: stream.method,
        owner: stream.owner,
        status: 'running',
        events: 0,
        createdAt: stream.createdAt,
        completedAt: null,
      },
      events: [],
    });
    return { ok: true };
  }

  async append(id: string, events: PendingDurableEvent[], terminal: boolean, now: number): Promise<AppendOutcome> {
    return this.appendNow(id, events, terminal, now);
  }

  async cancel(id: string, now: number): Promise<AppendOutcome> {
    const outcome = this.appendNow(id, [{ id: 0, event: 'cancelled', data: CANCELLED_EVENT_DATA }], true, now);
    if (outcome.ok) this.hub.publishCancel(id);
    return outcome;
  }

  private appendNow(id: string, events: PendingDurableEvent[], terminal: boolean, now: number): AppendOutcome {
    const stream = this.streams.get(id);
    if (!stream) return { ok: false, status: 'missing' };
    const record = stream.record;
    if (record.status !== 'running') return { ok: false, status: record.status };
    let last = record.events;
    for (const event of events) {
      event.id = ++last;
      stream.events.push(event);
    }
    record.events = last;
    if (events.length) record.updatedAt = now;
    if (terminal) {
      record.status = STATUS_OF_TERMINAL[events[events.length - 1].event as DurableTerminalEventName];
      record.completedAt = now;
    }
    this.hub.publish(id, events);
    return { ok: true, lastId: last };
  }

  async lookup(id: string): Promise<LookupOutcome> {
    const stream = this.streams.get(id);
    if (stream) return { found: 'stream', record: { ...stream.record } };
    const tombstone = this.tombstones.get(id);
    return tombstone ? { found: 'expired', owner: tombstone.owner } : { found: 'none' };
  }

  async read(id: string, after: number, limit: number): Promise<DurableStreamEvent[]> {
    const stream = this.streams.get(id);
    // ids are 1..n at indexes 0..n-1
    return stream ? stream.events.slice(after, after + limit) : [];
  }

  async list(owner: string, status: DurableStreamStatus | undefined, limit: number): Promise<DurableStreamRecord[]> {
    const out: DurableStreamRecord[] = [];
    for (const { record } of this.streams.values()) {
      if (record.owner === owner && (status === undefined || record.status === status)) out.push({ ...record });
    }
    out.sort((a, b) => b.createdAt - a.createdAt);
    return out.slice(0, limit);
  }

  async subscribe(id: string, listener: DurableEventListener): Promise<() => void> {
    return this.hub.subscribe(id, listener);
  }

  onCancel(listener: (id: string) => void): () => void {
    return this.hub.onCancel(listener);
  }

  /** Nothing outlives the process that holds this store, so nothing is ever left behind running. */
  async recoverInterrupted(): Promise<string[]> {
    return [];
  }

  async sweep(expiredBefore: number, forgetBefore: number): Promise<number> {
    let deleted = 0;
    for (const [id, { record }] of this.streams) {
      if (record.completedAt !== null && record.completedAt < expiredBefore) {
        this.streams.delete(id);
        this.tombstones.set(id, { owner: record.owner, forgetAt: record.completedAt });
        deleted++;
      }
    }
    for (const [id, tombstone] of this.tombstones) if (tombstone.forgetAt < forgetBefore) this.tombstones.delete(id);
    return deleted;
  }
}
