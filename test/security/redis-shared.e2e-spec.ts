/**
 * The `redis` option: two app instances on different ports share one rate limit, one cache and
 * its invalidation — on the Redis at REDIS_URL (default redis://127.0.0.1:6379: skipped with a
 * loud message when none answers, failed instead when REQUIRE_REDIS=1), and on a private local
 * Redis Cluster of three primaries started here (`redis: { cluster: { nodes } }`; needs
 * redis-server and redis-cli, same rule).
 */
import { Injectable, Module } from '@nestjs/common';
import { Redis } from 'ioredis';
import { JsonRpcModule, RpcCache, RpcCacheInvalidator, RpcCtx, RpcMethod, RpcRateLimit, type JsonRpcModuleOptions, type RpcContext } from '@nest-jsonrpc/server';
import { describeWithRedis } from '../support/redis.js';
import { describeWithRedisServer, PrivateRedisCluster } from '../support/redis-server.js';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';
import { REDIS_URL, as, call, headerIdentity } from './security-apps.js';

const keyPrefix = `nest-jsonrpc-test:${process.pid}:${Date.now()}:`;

@Injectable()
class Shared {
  runs = 0;
  @RpcMethod('limited') @RpcRateLimit({ limit: 10, interval: 60, scope: 'global' })
  limited() { return 'ok'; }

  @RpcMethod('perUser') @RpcRateLimit({ limit: 2, interval: 60, scope: 'user' })
  perUser() { return 'ok'; }

  @RpcMethod('report') @RpcCache({ ttl: 60, tags: ['reports'] })
  report(p: { month: string; region: string }) { return { month: p.month, region: p.region, run: ++this.runs }; }

  @RpcMethod('mine') @RpcCache({ ttl: 60, scope: 'user' })
  mine(_p: unknown, @RpcCtx() ctx: RpcContext) { return { user: (ctx.user as { id: string }).id, run: ++this.runs }; }
}

function sharedModule(redis: JsonRpcModuleOptions['redis']) {
  @Module({ imports: [JsonRpcModule.forRoot({ redis })], providers: [Shared] })
  class SharedModule {}
  return SharedModule;
}

/** Where the two instances meet: the shared Redis, or a private cluster. */
interface Deployment {
  name: string;
  describe: jest.Describe;
  start(): Promise<JsonRpcModuleOptions['redis']>;
  stop(): Promise<void>;
}

let cluster: PrivateRedisCluster | undefined;
const DEPLOYMENTS: Deployment[] = [
  {
    name: 'one Redis',
    describe: await describeWithRedis('the shared rate-limit and cache tests'),
    start: async () => ({ url: REDIS_URL, keyPrefix }),
    async stop() {
      const redis = new Redis(REDIS_URL);
      const keys = await redis.keys(`*${keyPrefix}*`);
      if (keys.length) await redis.del(...keys);
      await redis.quit();
    },
  },
  {
    name: 'a Redis Cluster',
    describe: describeWithRedisServer('the shared rate-limit and cache tests on a Redis Cluster'),
    async start() {
      cluster = await PrivateRedisCluster.start();
      return { cluster: { nodes: cluster.urls }, keyPrefix };
    },
    stop: async () => cluster?.stop(),
  },
];

for (const deployment of DEPLOYMENTS) deployment.describe(`two instances sharing ${deployment.name}`, () => {
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    const module = sharedModule(await deployment.start());
    a = await startTestApp(module, headerIdentity);
    b = await startTestApp(module, headerIdentity);
  }, 60_000);
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await deployment.stop();
  });

  it('logs where limits and cache live', () => {
    expect(a.logger.text()).toContain('rate limits in redis, cache in redis');
  });

  it('one limit across instances: 50 concurrent calls split over both, exactly 10 succeed', async () => {
    const started = Date.now();
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).rpc(call('limited', undefined, i))));
    // The window opened with the first call; a loaded machine may take seconds to answer all 50.
    const elapsed = Math.ceil((Date.now() - started) / 1000);
    expect(answers.filter((r) => r.body.result === 'ok')).toHaveLength(10);
    const denied = answers.filter((r) => r.body.error);
    expect(denied).toHaveLength(40);
    for (const d of denied) {
      expect(d.body.error.code).toBe(-32003);
      expect(d.body.error.data.retryAfter).toBeGreaterThanOrEqual(59 - elapsed);
      expect(d.body.error.data.retryAfter).toBeLessThanOrEqual(60);
      expect(Number(d.headers.get('retry-after'))).toBe(d.body.error.data.retryAfter);
    }
  });

  it('switching instance does not dodge a per-user limit', async () => {
    expect((await a.rpc(call('perUser'), as('ann'))).body.result).toBe('ok');
    expect((await b.rpc(call('perUser'), as('ann'))).body.result).toBe('ok');
    expect((await a.rpc(call('perUser'), as('ann'))).body.error.code).toBe(-32003);
    expect((await b.rpc(call('perUser'), as('bob'))).body.result).toBe('ok');
  });

  // The cache tests count handler runs relative to their start and use their own params and
  // users, so they pass in any order (the suite runs shuffled in scripts/loop-suites.sh).
  it('one cache across instances, key order independent, per-user entries stay per user', async () => {
    const shared = a.app.get(Shared);
    const other = b.app.get(Shared);
    const [runsA, runsB] = [shared.runs, other.runs];
    expect((await a.rpc(call('report', { month: '2024-01', region: 'eu' }))).body.result).toEqual({ month: '2024-01', region: 'eu', run: runsA + 1 });
    expect((await b.rpc(call('report', { region: 'eu', month: '2024-01' }))).body.result).toEqual({ month: '2024-01', region: 'eu', run: runsA + 1 });
    expect(other.runs).toBe(runsB);
    expect((await a.rpc(call('mine', {}), as('ann'))).body.result).toEqual({ user: 'ann', run: runsA + 2 });
    expect((await b.rpc(call('mine', {}), as('bob'))).body.result).toEqual({ user: 'bob', run: runsB + 1 });
    expect((await b.rpc(call('mine', {}), as('ann'))).body.result).toEqual({ user: 'ann', run: runsA + 2 });
    expect((await a.rpc(call('mine', {}), as('bob'))).body.result).toEqual({ user: 'bob', run: runsB + 1 });
    expect(shared.runs).toBe(runsA + 2);
    expect(other.runs).toBe(runsB + 1);
  });

  it('a purge on one instance is seen by the other (by method and by tag)', async () => {
    const shared = a.app.get(Shared);
    const other = b.app.get(Shared);
    const report = call('report', { month: '2025-06', region: 'us' });
    const filled = (await a.rpc(report)).body.result.run;
    expect((await b.rpc(report)).body.result.run).toBe(filled);
    await a.app.get(RpcCacheInvalidator).purgeTags(['reports']);
    const runsB = other.runs;
    expect((await b.rpc(report)).body.result.run).toBe(runsB + 1);
    expect((await a.rpc(report)).body.result.run).toBe(runsB + 1);

    const mine = (await a.rpc(call('mine', {}), as('cleo'))).body.result.run;
    expect((await b.rpc(call('mine', {}), as('cleo'))).body.result.run).toBe(mine);
    await b.app.get(RpcCacheInvalidator).purgeMethod('mine');
    const runsA = shared.runs;
    expect((await a.rpc(call('mine', {}), as('cleo'))).body.result).toEqual({ user: 'cleo', run: runsA + 1 });
  });
});
