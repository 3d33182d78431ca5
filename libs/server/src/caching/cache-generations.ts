import type { Cache } from 'cache-manager';

/**
 * Invalidation by generation: every entry key embeds the current generation of the names it
 * depends on (all, its method, its params, each of its tags). Purging bumps a generation, so old
 * entries are never read again and simply expire. This works on any cache-manager store, which
 * can neither list keys nor delete by pattern.
 */
export interface CacheGenerations {
  /** The current generations of `names` then `extra`, joined; synchronous when they live in this process. */
  read(names: readonly string[], extra: string): string | Promise<string>;
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

/** Generations stored in the cache itself: for a store shared by several instances (Redis, or the app's own). */
export class StoredCacheGenerations implements CacheGenerations {
  constructor(
    private readonly cache: Cache,
    private readonly keyPrefix: string,
  ) {}

  async read(names: readonly string[], extra: string): Promise<string> {
    const keys = names.map((n) => `${this.keyPrefix}gen:${n}`);
    keys.push(`${this.keyPrefix}gen:${extra}`);
    const values = await this.cache.mget<string>(keys);
    return values.map((v) => (typeof v === 'string' ? v : '0')).join('.');
  }

  async bump(names: readonly string[]): Promise<void> {
    await Promise.all(names.map((n) => this.cache.set(`${this.keyPrefix}gen:${n}`, freshToken(), GENERATION_TTL_MS)));
  }
}
