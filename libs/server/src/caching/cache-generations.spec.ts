import type { Cache } from 'cache-manager';
import { StoredCacheGenerations } from './cache-generations.js';

/** A cache-manager stand-in over a Map that can "evict" keys, counting round trips. */
function mapCache() {
  const map = new Map<string, unknown>();
  const calls = { mget: 0, mset: 0 };
  const cache = {
    mget: async (keys: string[]) => (calls.mget++, keys.map((k) => map.get(k))),
    mset: async (list: Array<{ key: string; value: unknown }>) => {
      calls.mset++;
      for (const { key, value } of list) map.set(key, value);
    },
  } as unknown as Cache;
  return { cache, map, calls };
}

describe('StoredCacheGenerations', () => {
  it('a missing generation is a new one, stored before it is used', async () => {
    const { cache, map } = mapCache();
    const generations = new StoredCacheGenerations(cache, 'x:');
    const first = await generations.read(['*', 'm'], 'p', 1000);
    expect(first.split('.')).toHaveLength(3);
    expect(first.split('.').every((g) => g !== '0')).toBe(true);
    expect([...map.keys()].sort()).toEqual(['x:gen:*', 'x:gen:m', 'x:gen:p']);
    expect(await generations.read(['*', 'm'], 'p', 1000)).toBe(first);
  });

  it('a purge stays a purge when its generation key is evicted: neither the old nor the purged generation comes back', async () => {
    const { cache, map } = mapCache();
    const generations = new StoredCacheGenerations(cache, 'x:');
    const before = await generations.read(['m'], 'p', 1000);
    await generations.bump(['m']);
    const purged = await generations.read(['m'], 'p', 1000);
    expect(purged).not.toBe(before);
    map.delete('x:gen:m');
    const afterEviction = await generations.read(['m'], 'p', 1000);
    expect([before, purged]).not.toContain(afterEviction);
  });

  it('concurrent reads of the same generations share one round trip, so they agree', async () => {
    const { cache, calls } = mapCache();
    const generations = new StoredCacheGenerations(cache, 'x:');
    const all = await Promise.all(Array.from({ length: 10 }, () => generations.read(['m'], 'p', 1000)));
    expect(new Set(all).size).toBe(1);
    expect(calls).toEqual({ mget: 1, mset: 1 });
  });

  it('a read begun before a purge is not shared with reads after it', async () => {
    const { cache } = mapCache();
    const generations = new StoredCacheGenerations(cache, 'x:');
    await generations.read(['m'], 'p', 1000);
    const early = generations.read(['m'], 'p', 1000);
    await generations.bump(['m']);
    const late = generations.read(['m'], 'p', 1000);
    expect(await late).not.toBe(await early);
  });
});
