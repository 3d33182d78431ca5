/**
 * Caching correctness over real HTTP:
 * - a purge is never undone when the store loses the generation key it wrote (an LRU or
 *   `maxmemory` eviction, an expiry): a missing generation is a new one;
 * - concurrent misses for one key run the handler once (single flight, per process), on every
 *   store: the in-process map, the app's CACHE_MANAGER over a small real LRU
 *   (`@cacheable/memory`), and Redis.
 */
import { randomUUID } from 'node:crypto';
import { Injectable, Module, type CanActivate, type DynamicModule, type ExecutionContext } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { CACHE_MANAGER, CacheModule } from '@nestjs/cache-manager';
import { KeyvCacheableMemory } from '@cacheable/memory';
import type { Cache } from 'cache-manager';
import { Keyv } from 'keyv';
import { JsonRpcModule, RpcCache, RpcCacheInvalidator, RpcMethod, getRpcContext } from '@nest-jsonrpc/server';
import { eventually, sleep } from '../support/async.js';
import { describeWithRedis, REDIS_URL } from '../support/redis.js';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';
import { call } from './security-apps.js';

/** A gate the test opens: calls wait on it, so their overlap is certain. */
class Gate {
  private open!: () => void;
  private opened = new Promise<void>((resolve) => (this.open = resolve));
  wait(): Promise<void> {
    return this.opened;
  }
  release(): void {
    this.open();
    this.opened = new Promise<void>((resolve) => (this.open = resolve));
  }
}

@Injectable()
class Prices {
  runs: Record<string, number> = {};
  readonly gate = new Gate();

  @RpcMethod('price') @RpcCache({ ttl: 60, tags: ['prices'] })
  price(p: { sku: string }) {
    return { sku: p.sku, run: (this.runs.price = (this.runs.price ?? 0) + 1) };
  }

  @RpcMethod('slow') @RpcCache({ ttl: 60 })
  async slow(p: { sku: string; fail?: boolean }) {
    const run = (this.runs[`slow:${p.sku}`] = (this.runs[`slow:${p.sku}`] ?? 0) + 1);
    await this.gate.wait();
    if (p.fail) throw new Error('upstream down');
    return { sku: p.sku, run };
  }
}

/** Counts calls of `slow` as they enter the pipeline (app guards run before the cache step). */
@Injectable()
class Arrivals implements CanActivate {
  static count = 0;
  canActivate(context: ExecutionContext): boolean {
    if (getRpcContext(context)?.method === 'slow') Arrivals.count++;
    return true;
  }
}

/** A real LRU of 8 entries behind the app's CACHE_MANAGER: generation keys compete with entries for room. */
const smallLru = () => CacheModule.register({ isGlobal: true, stores: [new Keyv({ store: new KeyvCacheableMemory({ lruSize: 8 }) })] });

const STORES: Array<{ name: string; describe: jest.Describe; imports: () => Array<DynamicModule>; cacheManager: boolean }> = [
  { name: 'the in-process store', describe, imports: () => [JsonRpcModule.forRoot()], cacheManager: false },
  { name: "the app's CACHE_MANAGER on a small LRU", describe, imports: () => [smallLru(), JsonRpcModule.forRoot()], cacheManager: true },
  {
    name: 'Redis (the redis option)',
    describe: await describeWithRedis('cache correctness on Redis'),
    imports: () => [JsonRpcModule.forRoot({ redis: { url: REDIS_URL, keyPrefix: `test-cache-correct-${randomUUID()}:` } })],
    cacheManager: false,
  },
];

for (const store of STORES) store.describe(`cache correctness on ${store.name}`, () => {
  let t: TestApp;
  let prices: Prices;
  beforeAll(async () => {
    @Module({ imports: store.imports(), providers: [Prices, { provide: APP_GUARD, useClass: Arrivals }] })
    class CorrectnessModule {}
    t = await startTestApp(CorrectnessModule);
    prices = t.app.get(Prices);
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await t.app.get(RpcCacheInvalidator).purgeAll();
    prices.runs = {};
    Arrivals.count = 0;
  });

  /** `n` identical calls at once; the gate opens once all have entered the pipeline. */
  async function concurrently(n: number, params: unknown) {
    const answers = Promise.all(Array.from({ length: n }, (_, i) => t.rpc(call('slow', params, i))));
    await eventually(() => Arrivals.count >= n, 10_000, `${n} calls to arrive`);
    // Past the guard, each call still looks the key up (a Redis round trip): give it time.
    await sleep(200);
    prices.gate.release();
    return answers;
  }

  it('20 concurrent misses for one key run the handler once; all get its answer', async () => {
    const answers = await concurrently(20, { sku: 'A' });
    expect(prices.runs['slow:A']).toBe(1);
    for (const [i, a] of answers.entries()) expect(a.body).toEqual({ jsonrpc: '2.0', result: { sku: 'A', run: 1 }, id: i });
    // And it was stored: the next call is a hit.
    expect((await t.rpc(call('slow', { sku: 'A' }))).body.result).toEqual({ sku: 'A', run: 1 });
    expect(prices.runs['slow:A']).toBe(1);
  });

  it('different keys fly separately', async () => {
    const answers = Promise.all([t.rpc(call('slow', { sku: 'B' }, 1)), t.rpc(call('slow', { sku: 'C' }, 2)), t.rpc(call('slow', { sku: 'B' }, 3))]);
    await eventually(() => Arrivals.count >= 3, 10_000);
    await sleep(200);
    prices.gate.release();
    const [b1, c, b2] = await answers;
    expect([b1.body.result, c.body.result, b2.body.result]).toEqual([{ sku: 'B', run: 1 }, { sku: 'C', run: 1 }, { sku: 'B', run: 1 }]);
    expect([prices.runs['slow:B'], prices.runs['slow:C']]).toEqual([1, 1]);
  });

  it('a failure is shared by the calls that waited for it, and not stored', async () => {
    const answers = await concurrently(5, { sku: 'F', fail: true });
    expect(prices.runs['slow:F']).toBe(1);
    for (const [i, a] of answers.entries()) expect(a.body).toEqual({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: i });
    const again = t.rpc(call('slow', { sku: 'F' }, 9));
    await eventually(() => prices.runs['slow:F'] === 2, 10_000);
    prices.gate.release();
    expect((await again).body.result).toEqual({ sku: 'F', run: 2 });
  });

  it('a purge holds even when the store has lost the generation keys since', async () => {
    expect((await t.rpc(call('price', { sku: 'P' }))).body.result.run).toBe(1);
    await t.app.get(RpcCacheInvalidator).purge('price', { sku: 'P' });
    expect((await t.rpc(call('price', { sku: 'P' }))).body.result.run).toBe(2);
    if (store.cacheManager) {
      // What an eviction does (the LRU's or Redis `maxmemory`'s): the generation keys are gone.
      const cache = t.app.get<Cache>(CACHE_MANAGER);
      await cache.mdel(['*', 'm:"price"', 't:"prices"', 'p:"price"{"sku":"P"}'].map((n) => `nest-jsonrpc:gen:${n}`));
      // Neither run 1 (purged) nor run 2 (its generation is gone, so is it): a fresh run.
      expect((await t.rpc(call('price', { sku: 'P' }))).body.result.run).toBe(3);
      expect((await t.rpc(call('price', { sku: 'P' }))).body.result.run).toBe(3);
    }
  });

  it('flooding the store never brings a purged answer back', async () => {
    expect((await t.rpc(call('price', { sku: 'Q' }))).body.result.run).toBe(1);
    await t.app.get(RpcCacheInvalidator).purgeTags('prices');
    // Far more keys than the small LRU holds: entries and generation keys are evicted in turn.
    for (let i = 0; i < 40; i++) await t.rpc(call('price', { sku: `flood-${i}` }));
    const runsBefore = prices.runs.price;
    const after = (await t.rpc(call('price', { sku: 'Q' }))).body.result;
    expect(after.run).toBeGreaterThan(1);
    expect(after.run).toBe(runsBefore + 1);
  });
});
