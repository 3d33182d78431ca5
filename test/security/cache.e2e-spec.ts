/**
 * @RpcCache: per method, scope and stable params hash; hits pass roles and limits; errors and
 * notifications never stored; RpcCacheInvalidator by params, method, tag and all. The same cases
 * run on every store: the in-process map, the app's CACHE_MANAGER, and Redis.
 */
import { randomUUID } from 'node:crypto';
import { Injectable, Module, type DynamicModule } from '@nestjs/common';
import { CACHE_MANAGER, CacheModule } from '@nestjs/cache-manager';
import type { Cache } from 'cache-manager';
import {
  JsonRpcModule,
  RpcCache,
  RpcCacheInvalidator,
  RpcCtx,
  RpcMethod,
  RpcNotFoundException,
  RpcRateLimit,
  type RpcContext,
} from '@nest-jsonrpc/server';
import { describeWithRedis, REDIS_URL } from '../support/redis.js';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';
import { as, call, headerIdentity, notification, secondsLeftOf } from './security-apps.js';

@Injectable()
class Catalog {
  runs: Record<string, number> = {};
  private count(name: string) {
    return (this.runs[name] = (this.runs[name] ?? 0) + 1);
  }

  @RpcMethod('price') @RpcCache({ ttl: 60, tags: ['prices'] })
  price(p: { sku: string; opts?: { cur: string; vat: boolean } }) {
    return { sku: p.sku, run: this.count('price') };
  }

  @RpcMethod('stock') @RpcCache({ ttl: 60, tags: ['stock', 'inventory'] })
  stock(p: { sku: string }) { return { sku: p.sku, run: this.count('stock') }; }

  @RpcMethod('other') @RpcCache({ ttl: 60 })
  other(p: { sku: string }) { return { other: p.sku, run: this.count('other') }; }

  @RpcMethod('mine') @RpcCache({ ttl: 60, scope: 'user' })
  mine(_p: unknown, @RpcCtx() ctx: RpcContext) {
    return { user: (ctx.user as { id?: string } | undefined)?.id ?? null, run: this.count('mine') };
  }

  @RpcMethod('tenant') @RpcCache({ ttl: 60, scope: (ctx) => String(ctx.request.headers['x-tenant'] ?? 'none') })
  tenant(_p: unknown, @RpcCtx() ctx: RpcContext) { return { tenant: ctx.request.headers['x-tenant'] ?? null, run: this.count('tenant') }; }

  @RpcMethod('flaky') @RpcCache({ ttl: 60 })
  flaky(p: { fail: boolean }) {
    const run = this.count('flaky');
    if (p.fail) throw new RpcNotFoundException('No such thing');
    return { run };
  }

  @RpcMethod('short') @RpcCache({ ttl: 1 })
  short() { return { run: this.count('short') }; }

  @RpcMethod('async') @RpcCache({ ttl: 60 })
  async slow() { await new Promise((r) => setTimeout(r, 5)); return { run: this.count('async') }; }

  @RpcMethod('limitedCached') @RpcCache({ ttl: 60 }) @RpcRateLimit({ limit: 2, interval: 60, scope: 'global' })
  limitedCached() { return { run: this.count('limitedCached') }; }

  @RpcMethod('bigint') @RpcCache({ ttl: 60 })
  bigint() { this.count('bigint'); return { n: BigInt(1) }; }
}

/** The stores every case below runs on: how the app is configured, and what the startup log says. */
const STORES: Array<{ name: string; describe: jest.Describe; imports: () => Array<DynamicModule>; logged: string }> = [
  { name: 'the in-process store', describe, imports: () => [JsonRpcModule.forRoot()], logged: 'cache in memory' },
  { name: "the app's CACHE_MANAGER", describe, imports: () => [CacheModule.register({ isGlobal: true }), JsonRpcModule.forRoot()], logged: 'cache in CACHE_MANAGER' },
  {
    name: 'Redis (the redis option)',
    describe: await describeWithRedis('@RpcCache on Redis'),
    imports: () => [JsonRpcModule.forRoot({ redis: { url: REDIS_URL, keyPrefix: `test-cache-${randomUUID()}:` } })],
    logged: 'cache in redis',
  },
];

const result = (value: unknown, id: number | string = 1) => ({ jsonrpc: '2.0', result: value, id });

for (const store of STORES) store.describe(`@RpcCache on ${store.name}`, () => {
  let t: TestApp;
  let catalog: Catalog;
  let invalidator: RpcCacheInvalidator;
  beforeAll(async () => {
    @Module({ imports: store.imports(), providers: [Catalog] })
    class CacheAppModule {}
    t = await startTestApp(CacheAppModule, headerIdentity);
    catalog = t.app.get(Catalog);
    invalidator = t.app.get(RpcCacheInvalidator);
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await invalidator.purgeAll();
    catalog.runs = {};
  });

  it('stores where it says it does', () => {
    expect(t.logger.text('log')).toContain(store.logged);
  });

  it('a call with the same params in another key order (at any depth) is a hit', async () => {
    expect((await t.rpc(call('price', { sku: 'A', opts: { cur: 'EUR', vat: true } }))).body).toEqual(result({ sku: 'A', run: 1 }));
    expect((await t.rpc(call('price', { opts: { vat: true, cur: 'EUR' }, sku: 'A' }, 7))).body).toEqual(result({ sku: 'A', run: 1 }, 7));
    expect((await t.rpc(call('price', { sku: 'B', opts: { cur: 'EUR', vat: true } }))).body).toEqual(result({ sku: 'B', run: 2 }));
    expect((await t.rpc(call('price', { sku: 'A', opts: { cur: 'EUR', vat: false } }))).body).toEqual(result({ sku: 'A', run: 3 }));
    expect(catalog.runs.price).toBe(3);
  });

  it("one method's entry never answers another method with the same params", async () => {
    expect((await t.rpc(call('stock', { sku: 'A' }))).body.result).toEqual({ sku: 'A', run: 1 });
    expect((await t.rpc(call('other', { sku: 'A' }))).body.result).toEqual({ other: 'A', run: 1 });
  });

  it('scope user: each user gets their own entry, never another user\'s', async () => {
    expect((await t.rpc(call('mine', {}), as('ann'))).body.result).toEqual({ user: 'ann', run: 1 });
    expect((await t.rpc(call('mine', {}), as('bob'))).body.result).toEqual({ user: 'bob', run: 2 });
    expect((await t.rpc(call('mine', {}))).body.result).toEqual({ user: null, run: 3 });
    expect((await t.rpc(call('mine', {}), as('ann'))).body.result).toEqual({ user: 'ann', run: 1 });
    expect((await t.rpc(call('mine', {}), as('bob'))).body.result).toEqual({ user: 'bob', run: 2 });
    expect((await t.rpc(call('mine', {}))).body.result).toEqual({ user: null, run: 3 });
    // Concurrent users in one batch each get their own.
    const both = await Promise.all([t.rpc(call('mine', {}), as('ann')), t.rpc(call('mine', {}), as('cid'))]);
    expect(both.map((r) => r.body.result.user)).toEqual(['ann', 'cid']);
  });

  it('a scope function keys entries by what it returns', async () => {
    expect((await t.rpc(call('tenant'), { headers: { 'x-tenant': 'acme' } })).body.result).toEqual({ tenant: 'acme', run: 1 });
    expect((await t.rpc(call('tenant'), { headers: { 'x-tenant': 'globex' } })).body.result).toEqual({ tenant: 'globex', run: 2 });
    expect((await t.rpc(call('tenant'), { headers: { 'x-tenant': 'acme' } })).body.result).toEqual({ tenant: 'acme', run: 1 });
  });

  it('errors are never stored', async () => {
    const error = { jsonrpc: '2.0', error: { code: -32002, message: 'No such thing' }, id: 1 };
    expect((await t.rpc(call('flaky', { fail: true }))).body).toEqual(error);
    expect((await t.rpc(call('flaky', { fail: true }))).body).toEqual(error);
    expect(catalog.runs.flaky).toBe(2);
    // A result JSON cannot represent is an internal error, and not stored either.
    expect((await t.rpc(call('bigint'))).body.error).toEqual({ code: -32603, message: 'Internal error' });
    expect((await t.rpc(call('bigint'))).body.error.code).toBe(-32603);
    expect(catalog.runs.bigint).toBe(2);
  });

  it('notifications run the handler and are never stored nor served', async () => {
    expect((await t.post(notification('stock', { sku: 'N' }))).status).toBe(204);
    expect((await t.post(notification('stock', { sku: 'N' }))).status).toBe(204);
    expect(catalog.runs.stock).toBe(2);
    expect((await t.rpc(call('stock', { sku: 'N' }))).body.result).toEqual({ sku: 'N', run: 3 });
  });

  it('entries expire after ttl seconds; async handlers are cached too', async () => {
    expect((await t.rpc(call('short'))).body.result).toEqual({ run: 1 });
    expect((await t.rpc(call('short'))).body.result).toEqual({ run: 1 });
    await new Promise((r) => setTimeout(r, 1050));
    expect((await t.rpc(call('short'))).body.result).toEqual({ run: 2 });
    expect((await t.rpc(call('async'))).body.result).toEqual({ run: 1 });
    expect((await t.rpc(call('async'))).body.result).toEqual({ run: 1 });
  });

  it('hits still count against the rate limit', async () => {
    expect((await t.rpc(call('limitedCached'))).body.result).toEqual({ run: 1 });
    expect((await t.rpc(call('limitedCached'))).body.result).toEqual({ run: 1 });
    expect((await t.rpc(call('limitedCached'))).body.error).toEqual({ code: -32003, message: 'Rate limit exceeded for limitedCached', data: { retryAfter: secondsLeftOf(60) } });
  });

  it('purge(method, params) drops that entry in any key order, and only that one', async () => {
    await t.rpc(call('price', { sku: 'A', opts: { cur: 'EUR', vat: true } }));
    await t.rpc(call('price', { sku: 'B' }));
    await invalidator.purge('price', { opts: { vat: true, cur: 'EUR' }, sku: 'A' });
    expect((await t.rpc(call('price', { sku: 'A', opts: { cur: 'EUR', vat: true } }))).body.result).toEqual({ sku: 'A', run: 3 });
    expect((await t.rpc(call('price', { sku: 'B' }))).body.result).toEqual({ sku: 'B', run: 2 });
  });

  it('purgeMethod drops every entry of that method, in every scope', async () => {
    await t.rpc(call('mine', {}), as('ann'));
    await t.rpc(call('mine', {}), as('bob'));
    await t.rpc(call('other', { sku: 'X' }));
    await invalidator.purgeMethod('mine');
    expect((await t.rpc(call('mine', {}), as('ann'))).body.result).toEqual({ user: 'ann', run: 3 });
    expect((await t.rpc(call('mine', {}), as('bob'))).body.result).toEqual({ user: 'bob', run: 4 });
    expect((await t.rpc(call('other', { sku: 'X' }))).body.result).toEqual({ other: 'X', run: 1 });
  });

  it('purgeTags drops every method carrying one of the tags', async () => {
    await t.rpc(call('price', { sku: 'T' }));
    await t.rpc(call('stock', { sku: 'T' }));
    await t.rpc(call('other', { sku: 'T' }));
    await invalidator.purgeTags(['inventory']);
    expect((await t.rpc(call('stock', { sku: 'T' }))).body.result).toEqual({ sku: 'T', run: 2 });
    expect((await t.rpc(call('price', { sku: 'T' }))).body.result).toEqual({ sku: 'T', run: 1 });
    await invalidator.purgeTags('prices');
    expect((await t.rpc(call('price', { sku: 'T' }))).body.result).toEqual({ sku: 'T', run: 2 });
    expect((await t.rpc(call('other', { sku: 'T' }))).body.result).toEqual({ other: 'T', run: 1 });
  });

  it('purgeAll drops everything', async () => {
    await t.rpc(call('price', { sku: 'Z' }));
    await t.rpc(call('other', { sku: 'Z' }));
    await invalidator.purgeAll();
    expect((await t.rpc(call('price', { sku: 'Z' }))).body.result.run).toBe(2);
    expect((await t.rpc(call('other', { sku: 'Z' }))).body.result.run).toBe(2);
  });
});

describe("@RpcCache with the app's CACHE_MANAGER", () => {
  @Module({ imports: [CacheModule.register({ isGlobal: true }), JsonRpcModule.forRoot()], providers: [Catalog] })
  class WithCacheManager {}

  it('stores entries in it, and the invalidator works through it', async () => {
    const t = await startTestApp(WithCacheManager);
    try {
      const cache = t.app.get<Cache>(CACHE_MANAGER);
      expect((await t.rpc(call('price', { sku: 'A' }))).body.result).toEqual({ sku: 'A', run: 1 });
      expect((await t.rpc(call('price', { sku: 'A' }))).body.result).toEqual({ sku: 'A', run: 1 });
      // The key embeds the generations of all, the method, its tag and its params, each stored in the cache.
      const generations = await cache.mget<string>(['*', 'm:"price"', 't:"prices"', 'p:"price"{"sku":"A"}'].map((n) => `nest-jsonrpc:gen:${n}`));
      expect(generations.every((g) => typeof g === 'string')).toBe(true);
      const key = `nest-jsonrpc:c:"price""g"{"sku":"A"}:${generations.join('.')}`;
      expect(await cache.get(key)).toBe('{"sku":"A","run":1}');
      await t.app.get(RpcCacheInvalidator).purgeTags(['prices']);
      expect((await t.rpc(call('price', { sku: 'A' }))).body.result).toEqual({ sku: 'A', run: 2 });
      expect(t.logger.text()).toContain('cache in CACHE_MANAGER');
    } finally {
      await t.close();
    }
  });
});
