import type { DurableEventName, DurableStreamEvent, DurableStreamStatus } from '@nest-jsonrpc/protocol';

/** One stream's metadata, as a store keeps it. */
export interface DurableStreamRecord {
  readonly id: string;
  readonly method: string;
  /** The id of the caller that started it (`security.userIdResolver`); null for an anonymous caller. */
  readonly owner: string | null;
  readonly status: DurableStreamStatus;
  /** Events committed so far (= id of the last one; the terminal event included). */
  readonly events: number;
  /** Epoch milliseconds. */
  readonly createdAt: number;
  readonly completedAt: number | null;
  /**
   * Epoch milliseconds of the last commit that added events (the `now` given to `append`, or to
   * `cancel`): what an MCP task reports as its `lastUpdatedAt` while it works. Absent before the
   * first commit; a store that does not keep it leaves it out, and readers fall back to `createdAt`.
   */
  readonly updatedAt?: number;
}

/** Receives events after they are committed, in id order, in contiguous batches. */
export type DurableEventListener = (events: readonly DurableStreamEvent[]) => void;

/** A stream to create, with the `maxRunning` limits to enforce atomically with the creation. */
export interface NewDurableStream {
  id: string;
  method: string;
  owner: string | null;
  createdAt: number;
  limits: { total?: number; perUser?: number };
}

export type CreateOutcome = { ok: true } | { ok: false; scope: 'total' | 'perUser'; limit: number };

/** An event to append: `id` is assigned by the store at commit (the object is updated in place). */
export interface PendingDurableEvent {
  id: number;
  event: DurableEventName;
  data: string;
}

export type AppendOutcome =
  /** Committed; `lastId` is the id of the last event appended. */
  | { ok: true; lastId: number }
  /** Nothing committed: the stream is unknown, or already ended (its terminal event was written by someone else). */
  | { ok: false; status: DurableStreamStatus | 'missing' };

/** What a lookup finds: the stream, a tombstone of one deleted after retention, or nothing. */
export type LookupOutcome =
  | { found: 'stream'; record: DurableStreamRecord }
  | { found: 'expired'; owner: string | null }
  | { found: 'none' };

/** What a store's health probe found (`checkHealth`), for readiness and health endpoints. */
export interface StreamStoreHealth {
  /** The store answered the probe. */
  up: boolean;
  /** `redis`, `redis-cluster`, `sqlite`, `memory`, or your store's word. */
  kind: string;
  /** How long the probe took, in ms. */
  latencyMs: number;
  /** Why it is down (or what was probed), for humans. */
  detail?: string;
}

/**
 * Where durable streams live. Rules every implementation keeps:
 * - `append` assigns ids (last id + 1, from 1) and commits atomically, and only while the stream is
 *   `running`: the first terminal event wins, everything after it is refused. That makes cancel
 *   vs. completion vs. a second cancel a clean race with one winner.
 * - listeners hear of events only after they are committed, in order; a listener may miss
 *   events (e.g. a dropped pub/sub message) but never sees uncommitted ones — subscribers detect
 *   a gap by id and read it back from the store.
 * - `onCancel` listeners hear of every stream cancelled through `cancel`, on every instance that
 *   shares the store, so the instance running the producer can abort it.
 * - a store that cannot be reached throws `StreamStoreUnavailableError`, at once while it knows
 *   it is down rather than waiting for it to come back. After `append` threw it, the same
 *   `events` array may be passed to `append` again (the runner retries until the store is back):
 *   a store whose commit may have happened without its answer arriving (a network store) must
 *   apply that batch at most once.
 */
export interface StreamStore {
  /** Opens connections/files and creates the schema. Called once at application bootstrap. */
  open(): Promise<void>;
  close(): Promise<void>;

  create(stream: NewDurableStream): Promise<CreateOutcome>;
  append(id: string, events: PendingDurableEvent[], terminal: boolean, now: number): Promise<AppendOutcome>;
  /** Writes the terminal `cancelled` event if the stream still runs and tells every instance. */
  cancel(id: string, now: number): Promise<AppendOutcome>;

  lookup(id: string): Promise<LookupOutcome>;
  /** Events with id > `after`, at most `limit`, in id order. */
  read(id: string, after: number, limit: number): Promise<DurableStreamEvent[]>;
  /** The owner's streams, newest first, at most `limit`. */
  list(owner: string, status: DurableStreamStatus | undefined, limit: number): Promise<DurableStreamRecord[]>;

  /** Resolves once the listener is registered (events committed later reach it). */
  subscribe(id: string, listener: DurableEventListener): Promise<() => void>;
  onCancel(listener: (id: string) => void): () => void;

  /**
   * Ends with the terminal `error` (-32603 "Stream interrupted") every stream left `running` by a
   * process that is gone. Returns their ids. `localRunning` are the streams this process runs.
   */
  recoverInterrupted(localRunning: ReadonlySet<string>, now: number): Promise<string[]>;
  /**
   * Deletes finished streams completed before `expiredBefore` with their events, leaving a
   * tombstone (for 410 answers) until `forgetBefore`. Returns how many streams were deleted.
   */
  sweep(expiredBefore: number, forgetBefore: number): Promise<number>;

  /**
   * Optional: tells when the store becomes unreachable (`false`) and when it is back (`true`).
   * After `true`, fan-out works again but may have missed commits made meanwhile: subscribers
   * re-read from the store. Stores without it are judged by their operations' errors alone.
   */
  onAvailability?(listener: (available: boolean) => void): () => void;
  /**
   * Optional, for a fan-out that can lose a message with no later one to reveal the gap (the last
   * events of a stream; a Redis Cluster's pub/sub connection moving to another node, which
   * resubscribes without announcing an outage): once a stream's live subscriptions (in this
   * process) have heard nothing for this many ms, the store is read after what they delivered —
   * one read per stream, however many subscribe. Unset or 0: never (an in-process fan-out, which
   * loses nothing).
   */
  readonly fanOutRecheckMs?: number;
  /** Optional: probes the store (a PING, a write to the file) for health checks. Never throws. */
  checkHealth?(): Promise<StreamStoreHealth>;
}
