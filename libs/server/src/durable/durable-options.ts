import { MAX_TIMER_DELAY_MS } from '../timer-delay.js';
import type { StreamStore } from './stream-store.js';

export interface JsonRpcDurableOptions {
  /** Off by default; a durable method while disabled fails startup. */
  enabled?: boolean;
  /** Base path of the attach/list/cancel routes. Default `/rpc/streams`. */
  path?: string;
  /** Where events are kept. Default: `new SqliteStreamStore()` (a file under `./data`). */
  store?: StreamStore;
  /** Seconds a finished stream and its events are kept. Default 86400 (24 h). */
  retention?: number;
  /** Milliseconds between `:` comments on an idle attached SSE response; 0 turns them off. Default 15000. */
  keepAliveMs?: number;
  /** The SSE `retry:` a browser's EventSource waits before reconnecting, in ms. Default 3000. */
  retryMs?: number;
  /** Most streams running at once: in total, and per user (anonymous callers share one quota). */
  maxRunning?: { total?: number; perUser?: number };
}

export interface ResolvedDurableOptions {
  readonly enabled: boolean;
  readonly path: string;
  readonly store: StreamStore | undefined;
  readonly retention: number;
  readonly keepAliveMs: number;
  readonly retryMs: number;
  readonly maxRunning: { readonly total?: number; readonly perUser?: number };
}

const DURABLE_KEYS = ['enabled', 'path', 'store', 'retention', 'keepAliveMs', 'retryMs', 'maxRunning'];
const MAX_RUNNING_KEYS = ['total', 'perUser'];
const STORE_METHODS = ['open', 'close', 'create', 'append', 'cancel', 'lookup', 'read', 'list', 'subscribe', 'onCancel', 'recoverInterrupted', 'sweep'];

/** Fills the `durable` section's defaults; problems are pushed onto `problems` (reported with the others). */
export function resolveDurableOptions(options: JsonRpcDurableOptions | undefined, problems: string[]): ResolvedDurableOptions {
  const o = options ?? {};
  if (options !== undefined && (options === null || typeof options !== 'object')) {
    problems.push('"durable" must be an object');
  } else {
    for (const key of Object.keys(o)) if (!DURABLE_KEYS.includes(key)) problems.push(`unknown option "durable.${key}"`);
  }
  const enabled = o.enabled ?? false;
  if (typeof enabled !== 'boolean') problems.push('"durable.enabled" must be a boolean');
  const path = o.path ?? '/rpc/streams';
  if (typeof path !== 'string' || !path.startsWith('/') || path.endsWith('/') || /[:*?]/.test(path)) {
    problems.push('"durable.path" must be a string starting with "/", without a trailing "/" or route wildcards');
  }
  const store = o.store;
  if (store !== undefined && (store === null || typeof store !== 'object' || STORE_METHODS.some((m) => typeof (store as any)[m] !== 'function'))) {
    problems.push('"durable.store" must be a StreamStore (SqliteStreamStore, MemoryStreamStore, RedisStreamStore or your own)');
  }
  const retention = o.retention ?? 86_400;
  if (typeof retention !== 'number' || !Number.isFinite(retention) || retention <= 0) {
    problems.push(`"durable.retention" must be a positive number of seconds, got ${String(retention)}`);
  }
  const integer = (name: string, value: unknown, min: number) => {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min) problems.push(`"${name}" must be an integer >= ${min}, got ${String(value)}`);
  };
  const keepAliveMs = o.keepAliveMs ?? 15_000;
  integer('durable.keepAliveMs', keepAliveMs, 0);
  if (keepAliveMs > MAX_TIMER_DELAY_MS) problems.push(`"durable.keepAliveMs" must be at most ${MAX_TIMER_DELAY_MS} (about 24.8 days), got ${keepAliveMs}`);
  const retryMs = o.retryMs ?? 3_000;
  integer('durable.retryMs', retryMs, 0);
  const maxRunning: { total?: number; perUser?: number } = {};
  if (o.maxRunning !== undefined) {
    if (o.maxRunning === null || typeof o.maxRunning !== 'object') problems.push('"durable.maxRunning" must be an object');
    else {
      for (const key of Object.keys(o.maxRunning)) if (!MAX_RUNNING_KEYS.includes(key)) problems.push(`unknown option "durable.maxRunning.${key}"`);
      for (const key of ['total', 'perUser'] as const) {
        const value = o.maxRunning[key];
        if (value === undefined) continue;
        integer(`durable.maxRunning.${key}`, value, 1);
        maxRunning[key] = value;
      }
    }
  }
  return { enabled, path, store, retention, keepAliveMs, retryMs, maxRunning };
}
