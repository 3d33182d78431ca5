import { DEFAULT_PATHS } from '@nest-jsonrpc/protocol';
import type { StreamStore } from '../stream-stores/stream-store.js';
import { check, isPositiveNumber } from './option-checks.js';
import { OptionSection } from './option-section.js';

export interface JsonRpcDurableOptions {
  /** Off by default; a durable method while disabled fails startup. */
  enabled?: boolean;
  /** Base path of the attach/list/cancel routes. Default `<path>/streams` (`/rpc/streams`). */
  path?: string;
  /** Where events are kept. Default: `new SqliteStreamStore()` (a file under `./data`). */
  store?: StreamStore;
  /** Seconds a finished stream and its events are kept. Default 86400 (24 h). */
  retention?: number;
  /**
   * @deprecated `stream.keepAliveMs` keeps every SSE response alive, durable attaches included (one
   * option, one mechanism). Still read: when given, it applies to durable attaches instead.
   * Milliseconds of silence after which an attached SSE response gets a `:` comment; 0 = never.
   */
  keepAliveMs?: number;
  /** The SSE `retry:` a browser's EventSource waits before reconnecting, in ms. Default 3000. */
  retryMs?: number;
  /** Most streams running at once: in total, and per user (anonymous callers share one quota). */
  maxRunning?: { total?: number; perUser?: number };
  /**
   * Longest a start or a REST route waits for the store, in ms; past it (or at once when the store
   * is known to be down) a start answers -32603 `Stream store unavailable` and a route 503 with
   * `Retry-After`. Default 2000.
   */
  storeTimeoutMs?: number;
  /**
   * How long an attached client waits through a store outage, in ms: past it, it gets the id-less
   * terminal `event: error` (-32603 `Stream store unavailable`) and `event: end`, and reconnects
   * later with `Last-Event-ID`. Default 30000.
   */
  outageGraceMs?: number;
  /** Most events a producer holds uncommitted while the store is unreachable; past it the stream fails. Default 10000. */
  maxBufferedEvents?: number;
  /** Most bytes (of event JSON) a producer holds uncommitted while the store is unreachable. Default 8 MiB. */
  maxBufferedBytes?: number;
}

export interface ResolvedDurableOptions {
  readonly enabled: boolean;
  readonly path: string;
  readonly store: StreamStore | undefined;
  readonly retention: number;
  readonly keepAliveMs: number;
  readonly retryMs: number;
  readonly maxRunning: { readonly total?: number; readonly perUser?: number };
  readonly storeTimeoutMs: number;
  readonly outageGraceMs: number;
  readonly maxBufferedEvents: number;
  readonly maxBufferedBytes: number;
}

export const DEFAULT_STORE_TIMEOUT_MS = 2000;
export const DEFAULT_OUTAGE_GRACE_MS = 30_000;
export const DEFAULT_MAX_BUFFERED_EVENTS = 10_000;
export const DEFAULT_MAX_BUFFERED_BYTES = 8 * 1024 * 1024;

const STORE_METHODS = ['open', 'close', 'create', 'append', 'cancel', 'lookup', 'read', 'list', 'subscribe', 'onCancel', 'recoverInterrupted', 'sweep'];

const maxRunningSection = new OptionSection<NonNullable<JsonRpcDurableOptions['maxRunning']>, ResolvedDurableOptions['maxRunning']>('durable.maxRunning', {
  total: { check: check.integer(1), doc: 'most streams running at once' },
  perUser: { check: check.integer(1), doc: 'most streams of one user running at once (anonymous callers share one quota)' },
});

/**
 * The `durable` section. `keepAliveMs` has no default of its own: absent, the module's resolver
 * gives it `stream.keepAliveMs` (see resolve-options.ts).
 */
export const durableSection = new OptionSection<JsonRpcDurableOptions, ResolvedDurableOptions>('durable', {
  enabled: { default: false, check: check.boolean, doc: 'durable streams and their routes ([docs/durable.md](docs/durable.md)); a durable method while disabled fails startup' },
  path: { default: DEFAULT_PATHS.durable, belowPath: '/streams', check: check.basePath, doc: 'base path of the attach/list/cancel routes' },
  store: {
    check: (problems, label, store) => {
      if (store === null || typeof store !== 'object' || STORE_METHODS.some((m) => typeof (store as Record<string, unknown>)[m] !== 'function')) {
        problems.push(`${label} must be a StreamStore (SqliteStreamStore, MemoryStreamStore, RedisStreamStore or your own)`);
      }
    },
    shown: '`new SqliteStreamStore()` (`./data/durable-streams.sqlite`)',
    doc: '`SqliteStreamStore`, `MemoryStreamStore`, `RedisStreamStore` or your own',
  },
  retention: {
    default: 86_400,
    check: (problems, label, value) => {
      if (!isPositiveNumber(value)) problems.push(`${label} must be a positive number of seconds, got ${String(value)}`);
    },
    doc: 'seconds finished streams are kept',
  },
  keepAliveMs: {
    check: check.timerDelay(),
    shown: '`stream.keepAliveMs`',
    doc: '**deprecated**: `stream.keepAliveMs` covers attaches; when given, overrides it for them',
  },
  retryMs: { default: 3_000, check: check.integer(0), doc: 'the SSE `retry:`' },
  maxRunning: {
    resolve: (value, _label, problems) => maxRunningSection.read(value, problems),
    doc: '`{ total?, perUser? }` most streams running at once (-32003 with `data.limit`)',
  },
  storeTimeoutMs: {
    default: DEFAULT_STORE_TIMEOUT_MS,
    check: check.timerDelay(1),
    doc: 'a start or REST route waits this long for the store at most: then -32603 `Stream store unavailable` (503 on the routes)',
  },
  outageGraceMs: {
    default: DEFAULT_OUTAGE_GRACE_MS,
    check: check.timerDelay(1),
    doc: 'an attached client waits this long through a store outage, then gets the id-less terminal `error` frame',
  },
  maxBufferedEvents: {
    default: DEFAULT_MAX_BUFFERED_EVENTS,
    check: check.integer(1),
    doc: 'most events a producer holds uncommitted while the store is unreachable; past it the stream fails with -32603',
  },
  maxBufferedBytes: { default: DEFAULT_MAX_BUFFERED_BYTES, shown: '`8 MiB`', check: check.integer(1), doc: 'most bytes (of event JSON) a producer holds uncommitted while the store is unreachable' },
});
