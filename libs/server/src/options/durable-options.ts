import { DEFAULT_PATHS } from '@nest-jsonrpc/protocol';
import type { StreamStore } from '../stream-stores/stream-store.js';
import { isPositiveNumber, type OptionProblems } from './option-checks.js';

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

/** Fills the `durable` section's defaults; its problems are reported with the others. */
export function resolveDurableOptions(options: JsonRpcDurableOptions | undefined, problems: OptionProblems): ResolvedDurableOptions {
  const o: JsonRpcDurableOptions = problems.object('"durable"', options, DURABLE_KEYS, (key) => `unknown option "durable.${key}"`) ? (options ?? {}) : {};
  const enabled = o.enabled ?? false;
  problems.boolean('"durable.enabled"', enabled);
  const path = o.path ?? DEFAULT_PATHS.durable;
  if (typeof path !== 'string' || !path.startsWith('/') || path.endsWith('/') || /[:*?]/.test(path)) {
    problems.push('"durable.path" must be a string starting with "/", without a trailing "/" or route wildcards');
  }
  const store = o.store;
  if (store !== undefined && (store === null || typeof store !== 'object' || STORE_METHODS.some((m) => typeof (store as any)[m] !== 'function'))) {
    problems.push('"durable.store" must be a StreamStore (SqliteStreamStore, MemoryStreamStore, RedisStreamStore or your own)');
  }
  const retention = o.retention ?? 86_400;
  if (!isPositiveNumber(retention)) problems.push(`"durable.retention" must be a positive number of seconds, got ${String(retention)}`);
  const keepAliveMs = o.keepAliveMs ?? 15_000;
  problems.timerDelay('"durable.keepAliveMs"', keepAliveMs);
  const retryMs = o.retryMs ?? 3_000;
  problems.integer('"durable.retryMs"', retryMs, 0);
  const maxRunning: { total?: number; perUser?: number } = {};
  const limits = o.maxRunning;
  const limitsOk = problems.object('"durable.maxRunning"', limits, MAX_RUNNING_KEYS, (key) => `unknown option "durable.maxRunning.${key}"`);
  if (limitsOk && limits) {
    for (const key of ['total', 'perUser'] as const) {
      if (limits[key] === undefined) continue;
      problems.integer(`"durable.maxRunning.${key}"`, limits[key], 1);
      maxRunning[key] = limits[key];
    }
  }
  return { enabled, path, store, retention, keepAliveMs, retryMs, maxRunning };
}
