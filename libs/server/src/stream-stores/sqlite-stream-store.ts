import { accessSync, constants as fsConstants, mkdirSync, statfsSync } from 'node:fs';
import { dirname } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import {
  CANCELLED_EVENT_DATA,
  INTERRUPTED_EVENT_DATA,
  STATUS_OF_TERMINAL,
  type DurableStreamEvent,
  type DurableStreamStatus,
  type DurableTerminalEventName,
} from '@nest-jsonrpc/protocol';
import { LocalEventHub } from './local-event-hub.js';
import { StreamStoreUnavailableError } from './stream-store-unavailable.js';
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

export interface SqliteStreamStoreOptions {
  /** Database file; its directory is created when missing. Default `./data/durable-streams.sqlite`. */
  filename?: string;
  /**
   * SQLite `synchronous` pragma. `NORMAL` (default) survives a crash of the process — every
   * committed event is in the WAL — but may lose the last commits on a power cut; `FULL` does not.
   */
  synchronous?: 'OFF' | 'NORMAL' | 'FULL';
  /**
   * How long a write waits for a lock another process holds on the file (a backup, the sqlite3
   * shell), in ms; then it fails with SQLITE_BUSY, which the durable layer treats as the store
   * being unavailable: a start answers -32603, a producer retries its commit. The wait blocks the
   * event loop (better-sqlite3 is synchronous), hence short. Default 100.
   */
  busyTimeoutMs?: number;
}

/**
 * SQLite result codes meaning "not now" rather than "never": another process holds a lock, or the
 * disk is full (or refuses to grow the file), or I/O failed. Extended codes (`SQLITE_IOERR_WRITE`)
 * start with these.
 */
const UNAVAILABLE_CODES = /^SQLITE_(BUSY|LOCKED|FULL|IOERR|CANTOPEN|READONLY|PROTOCOL)/;

/** Runs `work`; a "not now" SQLite error becomes `StreamStoreUnavailableError`. */
function unlessUnavailable<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && UNAVAILABLE_CODES.test(code)) throw new StreamStoreUnavailableError(`${code}: ${(error as Error).message}`, { cause: error });
    throw error;
  }
}

export const DEFAULT_SQLITE_FILENAME = './data/durable-streams.sqlite';

/** The sibling file whose exclusive lock says which process owns a store's file. */
function sqliteOwnerLockFile(filename: string): string {
  return `${filename}-owner`;
}

/**
 * Takes the owner lock of `filename`: a small SQLite database beside it, opened in exclusive
 * locking mode and written once, so the connection holds an exclusive OS lock on it until it is
 * closed or the process dies (the kernel then drops it: a restart right after `kill -9` works).
 * The lock lives in its own file, not the store's, so that the store's file stays readable by
 * other processes (a backup with the sqlite3 shell). Another holder (another process, or another
 * open store on the same file in this one) is a plain startup error, never a "store unavailable":
 * two owners would each mark the other's running streams interrupted at start.
 */
function takeOwnerLock(Database: typeof BetterSqlite3, filename: string): BetterSqlite3.Database {
  const lockFile = sqliteOwnerLockFile(filename);
  let lock: BetterSqlite3.Database | undefined;
  try {
    lock = new Database(lockFile);
    lock.pragma('busy_timeout = 0');
    lock.pragma('locking_mode = EXCLUSIVE');
    // The first write takes the exclusive lock; in exclusive locking mode it is kept after COMMIT.
    lock.exec('BEGIN EXCLUSIVE');
    lock.exec('CREATE TABLE IF NOT EXISTS owner (only INTEGER PRIMARY KEY CHECK (only = 1), pid INTEGER NOT NULL, since INTEGER NOT NULL)');
    lock.prepare('INSERT OR REPLACE INTO owner (only, pid, since) VALUES (1, ?, ?)').run(process.pid, Date.now());
    lock.exec('COMMIT');
    return lock;
  } catch (error) {
    lock?.close();
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('SQLITE_BUSY')) {
      throw new Error(
        `SqliteStreamStore: ${filename} is already open in another process (or in another SqliteStreamStore of this one): ` +
          `one process per file (its owner lock, ${lockFile}, is held). Give each process its own file, ` +
          'or use RedisStreamStore for several processes serving one API.',
        { cause: error },
      );
    }
    throw new Error(`SqliteStreamStore: cannot take the owner lock ${lockFile}: ${(error as Error).message}`, { cause: error });
  }
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS durable_streams (
  id TEXT PRIMARY KEY,
  method TEXT NOT NULL,
  owner TEXT,
  status TEXT NOT NULL,
  events INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  completed_at INTEGER,
  updated_at INTEGER
);
CREATE INDEX IF NOT EXISTS durable_streams_status ON durable_streams (status);
CREATE INDEX IF NOT EXISTS durable_streams_owner ON durable_streams (owner, created_at);
CREATE INDEX IF NOT EXISTS durable_streams_completed ON durable_streams (completed_at) WHERE completed_at IS NOT NULL;
CREATE TABLE IF NOT EXISTS durable_events (
  stream_id TEXT NOT NULL,
  id INTEGER NOT NULL,
  event TEXT NOT NULL,
  data TEXT NOT NULL,
  PRIMARY KEY (stream_id, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS durable_tombstones (
  id TEXT PRIMARY KEY,
  owner TEXT,
  completed_at INTEGER NOT NULL
);
`;

interface StreamRow {
  id: string;
  method: string;
  owner: string | null;
  status: DurableStreamStatus;
  events: number;
  created_at: number;
  completed_at: number | null;
  updated_at: number | null;
}

function toRecord(row: StreamRow): DurableStreamRecord {
  return {
    id: row.id,
    method: row.method,
    owner: row.owner,
    status: row.status,
    events: row.events,
    createdAt: row.created_at,
    completedAt: row.completed_at,
    ...(row.updated_at !== null && { updatedAt: row.updated_at }),
  };
}

/**
 * The default store: one SQLite file (better-sqlite3, WAL). Commits are synchronous transactions,
 * so a batch of events is either wholly in the file or not at all, even if the process dies
 * mid-commit; listeners are called only after the transaction has committed. One process per
 * file, enforced: `open()` takes an exclusive lock on a sibling file (`<filename>-owner`) and
 * fails while another process (or another open instance) holds it. Several instances serving one
 * API need `RedisStreamStore`.
 */
export class SqliteStreamStore implements StreamStore {
  readonly filename: string;
  private readonly synchronous: 'OFF' | 'NORMAL' | 'FULL';
  private readonly busyTimeoutMs: number;
  private readonly hub = new LocalEventHub();
  private db: BetterSqlite3.Database | undefined;
  /** The owner lock's connection (none for `:memory:`), held from `open()` to `close()`. */
  private ownerLock: BetterSqlite3.Database | undefined;
  private statements!: ReturnType<SqliteStreamStore['prepare']>;
  private appendTx!: (id: string, events: PendingDurableEvent[], terminal: boolean, now: number) => AppendOutcome;
  private createTx!: (stream: NewDurableStream) => CreateOutcome;
  private sweepTx!: (expiredBefore: number, forgetBefore: number) => number;

  constructor(options: SqliteStreamStoreOptions = {}) {
    this.filename = options.filename ?? DEFAULT_SQLITE_FILENAME;
    this.synchronous = options.synchronous ?? 'NORMAL';
    if (!['OFF', 'NORMAL', 'FULL'].includes(this.synchronous)) {
      throw new Error(`SqliteStreamStore: "synchronous" must be OFF, NORMAL or FULL, got ${String(options.synchronous)}`);
    }
    this.busyTimeoutMs = options.busyTimeoutMs ?? 100;
    if (!Number.isInteger(this.busyTimeoutMs) || this.busyTimeoutMs < 0) {
      throw new Error(`SqliteStreamStore: "busyTimeoutMs" must be an integer >= 0, got ${String(options.busyTimeoutMs)}`);
    }
  }

  async open(): Promise<void> {
    if (this.db) return;
    // Loaded on demand: apps without durable streams (or with another store) never need the native module.
    const { default: Database } = await import('better-sqlite3');
    const onDisk = this.filename !== ':memory:';
    if (onDisk) mkdirSync(dirname(this.filename), { recursive: true });
    // Before the file is touched (and before the durable runner marks the streams "left running by
    // a previous process" as interrupted): a live owner's streams are not left running.
    const ownerLock = onDisk ? takeOwnerLock(Database, this.filename) : undefined;
    let db: BetterSqlite3.Database | undefined;
    try {
      db = new Database(this.filename);
      db.pragma('journal_mode = WAL');
      db.pragma(`synchronous = ${this.synchronous}`);
      db.pragma(`busy_timeout = ${this.busyTimeoutMs}`);
      db.exec(SCHEMA);
      // A file written before streams kept their last commit's time: the column is added (NULL for
      // the streams already there, which then report their creation time).
      const columns = db.pragma('table_info(durable_streams)') as Array<{ name: string }>;
      if (!columns.some((column) => column.name === 'updated_at')) db.exec('ALTER TABLE durable_streams ADD COLUMN updated_at INTEGER');
    } catch (error) {
      db?.close();
      ownerLock?.close();
      throw error;
    }
    this.db = db;
    this.ownerLock = ownerLock;
    this.statements = this.prepare(db);
    this.appendTx = db.transaction(this.appendInTransaction.bind(this));
    this.createTx = db.transaction(this.createInTransaction.bind(this));
    this.sweepTx = db.transaction(this.sweepInTransaction.bind(this));
  }

  async close(): Promise<void> {
    this.hub.clear();
    const db = this.db;
    this.db = undefined;
    db?.close();
    // Last: a successor may take the file only once this store no longer writes to it.
    const ownerLock = this.ownerLock;
    this.ownerLock = undefined;
    ownerLock?.close();
  }

  private prepare(db: BetterSqlite3.Database) {
    return {
      insertStream: db.prepare(
        "INSERT INTO durable_streams (id, method, owner, status, events, created_at, completed_at) VALUES (?, ?, ?, 'running', 0, ?, NULL)",
      ),
      countRunning: db.prepare("SELECT COUNT(*) AS n FROM durable_streams WHERE status = 'running'").pluck(),
      countRunningOf: db.prepare("SELECT COUNT(*) AS n FROM durable_streams WHERE status = 'running' AND owner IS ?").pluck(),
      deleteStream: db.prepare('DELETE FROM durable_streams WHERE id = ?'),
      deleteEvents: db.prepare('DELETE FROM durable_events WHERE stream_id = ?'),
      head: db.prepare('SELECT status, events FROM durable_streams WHERE id = ?'),
      insertEvent: db.prepare('INSERT INTO durable_events (stream_id, id, event, data) VALUES (?, ?, ?, ?)'),
      setEvents: db.prepare('UPDATE durable_streams SET events = ?, updated_at = ? WHERE id = ?'),
      finish: db.prepare('UPDATE durable_streams SET events = ?, status = ?, completed_at = ?, updated_at = ? WHERE id = ?'),
      get: db.prepare('SELECT * FROM durable_streams WHERE id = ?'),
      tombstone: db.prepare('SELECT owner FROM durable_tombstones WHERE id = ?'),
      read: db.prepare('SELECT id, event, data FROM durable_events WHERE stream_id = ? AND id > ? ORDER BY id LIMIT ?'),
      list: db.prepare('SELECT * FROM durable_streams WHERE owner = ? ORDER BY created_at DESC LIMIT ?'),
      listByStatus: db.prepare('SELECT * FROM durable_streams WHERE owner = ? AND status = ? ORDER BY created_at DESC LIMIT ?'),
      running: db.prepare("SELECT id FROM durable_streams WHERE status = 'running'").pluck(),
      expired: db.prepare('SELECT id, owner, completed_at FROM durable_streams WHERE completed_at IS NOT NULL AND completed_at < ? LIMIT 500'),
      insertTombstone: db.prepare('INSERT OR REPLACE INTO durable_tombstones (id, owner, completed_at) VALUES (?, ?, ?)'),
      forgetTombstones: db.prepare('DELETE FROM durable_tombstones WHERE completed_at < ?'),
    };
  }

  /** A late write after `close()` must fail loudly, not crash the native module. */
  private ensureOpen(): void {
    if (!this.db) throw new Error('SqliteStreamStore is not open');
  }

  /** The prepared statements, once the store is open. */
  private get stmts(): typeof this.statements {
    this.ensureOpen();
    return this.statements;
  }

  async create(stream: NewDurableStream): Promise<CreateOutcome> {
    this.ensureOpen();
    return unlessUnavailable(() => this.createTx(stream));
  }

  private createInTransaction(stream: NewDurableStream): CreateOutcome {
    const s = this.statements;
    const { total, perUser } = stream.limits;
    if (total !== undefined && (s.countRunning.get() as number) >= total) return { ok: false, scope: 'total', limit: total };
    if (perUser !== undefined && (s.countRunningOf.get(stream.owner) as number) >= perUser) {
      return { ok: false, scope: 'perUser', limit: perUser };
    }
    s.insertStream.run(stream.id, stream.method, stream.owner, stream.createdAt);
    return { ok: true };
  }

  async append(id: string, events: PendingDurableEvent[], terminal: boolean, now: number): Promise<AppendOutcome> {
    this.ensureOpen();
    // A failed transaction rolled back: retrying the same events is safe (ids are assigned anew).
    const outcome = unlessUnavailable(() => this.appendTx(id, events, terminal, now));
    // After the commit, never inside it: a subscriber must not see what could still roll back.
    if (outcome.ok && events.length) this.hub.publish(id, events);
    return outcome;
  }

  private appendInTransaction(id: string, events: PendingDurableEvent[], terminal: boolean, now: number): AppendOutcome {
    const s = this.statements;
    const head = s.head.get(id) as { status: DurableStreamStatus; events: number } | undefined;
    if (!head) return { ok: false, status: 'missing' };
    if (head.status !== 'running') return { ok: false, status: head.status };
    let last = head.events;
    const insert = s.insertEvent;
    for (let i = 0; i < events.length; i++) {
      const event = events[i];
      event.id = ++last;
      insert.run(id, last, event.event, event.data);
    }
    if (terminal) {
      s.finish.run(last, STATUS_OF_TERMINAL[events[events.length - 1].event as DurableTerminalEventName], now, now, id);
    } else if (events.length) {
      s.setEvents.run(last, now, id);
    }
    return { ok: true, lastId: last };
  }

  async cancel(id: string, now: number): Promise<AppendOutcome> {
    const outcome = await this.append(id, [{ id: 0, event: 'cancelled', data: CANCELLED_EVENT_DATA }], true, now);
    if (outcome.ok) this.hub.publishCancel(id);
    return outcome;
  }

  async lookup(id: string): Promise<LookupOutcome> {
    return unlessUnavailable(() => {
      const row = this.stmts.get.get(id) as StreamRow | undefined;
      if (row) return { found: 'stream', record: toRecord(row) };
      const tombstone = this.statements.tombstone.get(id) as { owner: string | null } | undefined;
      return tombstone ? { found: 'expired', owner: tombstone.owner } : { found: 'none' };
    });
  }

  async read(id: string, after: number, limit: number): Promise<DurableStreamEvent[]> {
    return unlessUnavailable(() => this.stmts.read.all(id, after, limit) as DurableStreamEvent[]);
  }

  async list(owner: string, status: DurableStreamStatus | undefined, limit: number): Promise<DurableStreamRecord[]> {
    const s = this.stmts;
    const rows = unlessUnavailable(() => (status === undefined ? s.list.all(owner, limit) : s.listByStatus.all(owner, status, limit)) as StreamRow[]);
    return rows.map(toRecord);
  }

  async subscribe(id: string, listener: DurableEventListener): Promise<() => void> {
    return this.hub.subscribe(id, listener);
  }

  onCancel(listener: (id: string) => void): () => void {
    return this.hub.onCancel(listener);
  }

  async recoverInterrupted(localRunning: ReadonlySet<string>, now: number): Promise<string[]> {
    const recovered: string[] = [];
    for (const id of unlessUnavailable(() => this.stmts.running.all() as string[])) {
      if (localRunning.has(id)) continue;
      const outcome = await this.append(id, [{ id: 0, event: 'error', data: INTERRUPTED_EVENT_DATA }], true, now);
      if (outcome.ok) recovered.push(id);
    }
    return recovered;
  }

  async sweep(expiredBefore: number, forgetBefore: number): Promise<number> {
    this.ensureOpen();
    return unlessUnavailable(() => this.sweepTx(expiredBefore, forgetBefore));
  }

  /** Takes the write lock and lets it go (another process holding it: down), and looks for free space. */
  async checkHealth(): Promise<StreamStoreHealth> {
    const started = performance.now();
    const down = (detail: string): StreamStoreHealth => ({ up: false, kind: 'sqlite', latencyMs: performance.now() - started, detail });
    const db = this.db;
    if (!db) return down('not open');
    try {
      unlessUnavailable(() => db.exec('BEGIN IMMEDIATE; ROLLBACK'));
      if (this.filename !== ':memory:') {
        accessSync(this.filename, fsConstants.W_OK);
        const fs = statfsSync(dirname(this.filename));
        if (fs.bavail * fs.bsize === 0) return down(`no space left on ${dirname(this.filename)}`);
      }
      return { up: true, kind: 'sqlite', latencyMs: performance.now() - started, detail: this.filename };
    } catch (error) {
      return down(error instanceof Error ? error.message : String(error));
    }
  }

  private sweepInTransaction(expiredBefore: number, forgetBefore: number): number {
    const s = this.statements;
    let deleted = 0;
    for (;;) {
      const rows = s.expired.all(expiredBefore) as Array<{ id: string; owner: string | null; completed_at: number }>;
      for (const row of rows) {
        s.deleteEvents.run(row.id);
        s.deleteStream.run(row.id);
        s.insertTombstone.run(row.id, row.owner, row.completed_at);
      }
      deleted += rows.length;
      if (rows.length < 500) break;
    }
    s.forgetTombstones.run(forgetBefore);
    return deleted;
  }
}
