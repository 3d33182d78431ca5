import type { Cache } from 'cache-manager';

/** Where `@RpcCache` keeps result JSON. A synchronous store lets a cache hit cost no promise at all. */
export interface RpcResultStore {
  get(key: string): string | undefined | Promise<string | undefined>;
  set(key: string, json: string, ttlMs: number): void | Promise<unknown>;
}

/** The app's `CACHE_MANAGER`, or the Redis-backed cache-manager of the `redis` option. */
export class CacheManagerResultStore implements RpcResultStore {
  constructor(readonly cache: Cache) {}

  get(key: string): Promise<string | undefined> {
    return this.cache.get<string>(key);
  }

  set(key: string, json: string, ttlMs: number): Promise<unknown> {
    return this.cache.set(key, json, ttlMs);
  }
}

interface MemoryEntry {
  json: string;
  expiresAt: number;
}

/**
 * The in-process default: a Map with per-entry expiry and a bound on its size (the oldest entry
 * goes first), read synchronously. Hand-written rather than cache-manager + Keyv because a hit
 * through Keyv costs ~2 µs and two promise hops for what is a Map lookup, and the bound matters:
 * Keyv's Map store forgets expired entries only when read, so a client sending ever-new params
 * would grow memory without limit.
 */
export class MemoryResultStore implements RpcResultStore {
  private readonly entries = new Map<string, MemoryEntry>();

  constructor(private readonly maxEntries: number) {}

  get(key: string): string | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt > Date.now()) return entry.json;
    this.entries.delete(key);
    return undefined;
  }

  set(key: string, json: string, ttlMs: number): void {
    const entries = this.entries;
    if (entries.has(key)) entries.delete(key);
    else if (entries.size >= this.maxEntries) this.evict();
    entries.set(key, { json, expiresAt: Date.now() + ttlMs });
  }

  get size(): number {
    return this.entries.size;
  }

  /** Drops expired entries, or the oldest one when none has expired (Map order is insertion order). */
  private evict(): void {
    const now = Date.now();
    let dropped = 0;
    for (const [key, entry] of this.entries) {
      if (entry.expiresAt <= now) {
        this.entries.delete(key);
        dropped++;
      }
      if (dropped >= 64) break;
    }
    if (dropped === 0) this.entries.delete(this.entries.keys().next().value!);
  }
}
