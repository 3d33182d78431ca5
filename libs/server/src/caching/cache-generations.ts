import type { Cache } from 'cache-manager';

/**
 * Invalidation by generation: every entry key embeds the current generation of the names it
 * depends on (all, its method, its params, each of its tags). Purging bumps a generation, so old
 * entries are never read again and simply expire. This works on any cache-manager store, which
 * can neither list keys nor delete by pattern.
 *
 * A generation is a fresh random token, never a counter, and a generation that cannot be found is
 * a new one: so no entry written before a purge can ever match again, even when the store
 * evicts (LRU, `maxmemory`) or expires the generation key the purge wrote. An evicted generation
 * costs misses (its entries become unreachable), never a purge undone.
 */
export interface CacheGenerations {
  /**
   * The current generations of `names` then `extra`, joined; synchronous when they live in this
   * process. `extraTtlMs`: how long a generation created for `extra` is worth keeping (the
   * entries that depend on it live that long).
   */
  read(names: readonly string[], extra: string, extraTtlMs: number): string | Promise<string>;
  bump(names: readonly string[]): Promise<void>;
}

let counter = 0;
function freshToken(): string {
  return `${Date.now().toString(36)}${(counter++ % 1296).toString(36)}${Math.random().toString(36).slice(2, 6)}`;
}

const ZEROS: string[] = [];

/** Generations in a Map: for the module's own in-process cache, which no other instance sees. */
export class LocalCacheGenerations implements CacheGenerations {
  private readonly generations = new Map<string, string>();

  read(names: readonly string[], extra: string): string {
    // A Map forgets nothing, so a missing generation here is one never purged: '0' is safe.
    const generations = this.generations;
    // Nothing purged yet: the common case costs no lookup at all.
    if (generations.size === 0) return (ZEROS[names.length] ??= '0.'.repeat(names.length) + '0');
    let out = '';
    for (let i = 0; i < names.length; i++) out += (generations.get(names[i]) ?? '0') + '.';
    return out + (generations.get(extra) ?? '0');
  }

  async bump(names: readonly string[]): Promise<void> {
    for (const name of names) this.generations.set(name, freshToken());
  }
}

/** A year: generation keys must outlive every entry that depends on them. */
const GENERATION_TTL_MS = 365 * 24 * 3600 * 1000;

/**
 * Generations stored in the cache itself: for a store shared by several instances (Redis, or the
 * app's own). A missing generation — never purged, or evicted, or expired: the store cannot tell
 * which — gets a fresh token, stored before any entry is written under it. Two instances creating
 * one at once each write an entry under their own token and the last token written wins: the
 * other entry is never read (a miss), which is the safe side. Within one process, concurrent
 * reads of the same generations share one round trip (and so one created token): concurrent
 * calls then agree on their entry key, which the single flight of `RpcMethodCache` relies on.
 */
export class StoredCacheGenerations implements CacheGenerations {
  private readonly reading = new Map<string, Promise<string>>();

  constructor(
    private readonly cache: Cache,
    private readonly keyPrefix: string,
  ) {}

  read(names: readonly string[], extra: string, extraTtlMs: number): Promise<string> {
    const keys = names.map((n) => `${this.keyPrefix}gen:${n}`);
    keys.push(`${this.keyPrefix}gen:${extra}`);
    const id = keys.join('\n');
    const pending = this.reading.get(id);
    if (pending !== undefined) return pending;
    const read = this.readOrCreate(keys, extraTtlMs);
    this.reading.set(id, read);
    const done = (): void => {
      this.reading.delete(id);
    };
    read.then(done, done);
    return read;
  }

  private async readOrCreate(keys: string[], extraTtlMs: number): Promise<string> {
    const values = await this.cache.mget<string>(keys);
    let created: Array<{ key: string; value: string; ttl: number }> | undefined;
    for (let i = 0; i < values.length; i++) {
      if (typeof values[i] === 'string') continue;
      const value = freshToken();
      values[i] = value;
      (created ??= []).push({ key: keys[i], value, ttl: i === keys.length - 1 ? extraTtlMs : GENERATION_TTL_MS });
    }
    if (created) await this.cache.mset(created);
    return values.join('.');
  }

  async bump(names: readonly string[]): Promise<void> {
    // A read begun before the purge must not answer a call made after it.
    this.reading.clear();
    await this.cache.mset(names.map((n) => ({ key: `${this.keyPrefix}gen:${n}`, value: freshToken(), ttl: GENERATION_TTL_MS })));
    this.reading.clear();
  }
}
