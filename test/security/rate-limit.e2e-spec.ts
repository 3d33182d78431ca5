/**
 * @RpcRateLimit: counted per call and keyed by RPC method (batches and notifications count),
 * -32003 with data.retryAfter, Retry-After = largest of the batch, 429 with httpStatus, scopes,
 * the bypass provider, @SkipThrottle, the app's ThrottlerModule storage, RpcThrottlerGuard with
 * @Throttle. The same cases run on every storage adapter (throttler style): the in-process
 * counter, the app's ThrottlerModule storage, and Redis.
 */
import { randomUUID } from 'node:crypto';
import { Injectable, Module, type DynamicModule } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { SkipThrottle, Throttle, ThrottlerModule, ThrottlerStorage } from '@nestjs/throttler';
import {
  JsonRpcModule,
  RPC_RATE_LIMIT_BYPASS,
  RpcMethod,
  RpcRateLimit,
  RpcThrottlerGuard,
  type RpcContext,
  type RpcRateLimitBypass,
} from '@nest-jsonrpc/server';
import { describeWithRedis, REDIS_URL } from '../support/redis.js';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';
import { as, call, headerIdentity, limited, notification, secondsLeftOf } from './security-apps.js';

@Injectable()
class Limited {
  runs = 0;
  @RpcMethod('five') @RpcRateLimit({ limit: 5, interval: 60, scope: 'global' })
  five(p: unknown) { this.runs++; return p ?? 'ok'; }

  @RpcMethod('ten') @RpcRateLimit({ limit: 10, interval: 60, scope: 'global' })
  async ten() { await new Promise((r) => setTimeout(r, 5)); return 'ok'; }

  @RpcMethod('notify') @RpcRateLimit({ limit: 3, interval: 60, scope: 'global' })
  notify() { this.runs++; }

  @RpcMethod('short') @RpcRateLimit({ limit: 1, interval: 10, scope: 'global' }) short() { return 'short'; }
  @RpcMethod('long') @RpcRateLimit({ limit: 1, interval: 60, scope: 'global' }) long() { return 'long'; }

  @RpcMethod('perUser') @RpcRateLimit({ limit: 2, interval: 60, scope: 'user' }) perUser() { return 'u'; }
  @RpcMethod('perIp') @RpcRateLimit({ limit: 2, interval: 60, scope: 'ip' }) perIp() { return 'ip'; }
  @RpcMethod('everyone') @RpcRateLimit({ limit: 2, interval: 60, scope: 'global' }) everyone() { return 'g'; }

  @RpcMethod('window') @RpcRateLimit({ limit: 2, interval: 1, scope: 'global' }) window() { return 'w'; }
  @RpcMethod('blocking') @RpcRateLimit({ limit: 1, interval: 1, scope: 'global', blockDuration: 3 }) blocking() { return 'b'; }

  @RpcMethod('internal') @RpcRateLimit({ limit: 1, interval: 60, scope: 'global' }) internal() { return 'i'; }
}

@SkipThrottle({ rpc: true })
@Injectable()
class Unlimited {
  @RpcMethod('skipped') @RpcRateLimit({ limit: 1, interval: 60, scope: 'global' }) skipped() { return 's'; }
}

@Injectable()
class InternalCallers implements RpcRateLimitBypass {
  bypassRateLimit(ctx: RpcContext) {
    return ctx.request.headers['x-internal'] === 'yes';
  }
}

/** The storage adapters every case below runs on: how the app is configured, and what the startup log says. */
const STORAGES: Array<{ name: string; describe: jest.Describe; imports: () => Array<DynamicModule>; logged: string }> = [
  { name: 'the in-process counter', describe, imports: () => [JsonRpcModule.forRoot()], logged: 'rate limits in memory' },
  {
    name: "the app's ThrottlerModule storage",
    describe,
    // The app's own throttler ('default') is generous and not a guard here: only @RpcRateLimit counts.
    imports: () => [ThrottlerModule.forRoot([{ name: 'default', ttl: 60_000, limit: 1_000_000 }]), JsonRpcModule.forRoot()],
    logged: 'rate limits in ThrottlerModule storage',
  },
  {
    name: 'Redis (the redis option)',
    describe: await describeWithRedis('@RpcRateLimit on Redis'),
    // A prefix per run: other suites (and other runs) share this Redis.
    imports: () => [JsonRpcModule.forRoot({ redis: { url: REDIS_URL, keyPrefix: `test-rate-limit-${randomUUID()}:` } })],
    logged: 'rate limits in redis',
  },
];

for (const storage of STORAGES) storage.describe(`@RpcRateLimit on ${storage.name}`, () => {
  let t: TestApp;
  beforeAll(async () => {
    @Module({
      imports: storage.imports(),
      providers: [Limited, Unlimited, { provide: RPC_RATE_LIMIT_BYPASS, useClass: InternalCallers }],
    })
    class LimitModule {}
    t = await startTestApp(LimitModule, headerIdentity);
  });
  afterAll(() => t.close());

  it('counts where it says it does', () => {
    expect(t.logger.text('log')).toContain(storage.logged);
  });

  it('a batch of 10 calls against a limit of 5 gives 5 results and 5 errors; params do not matter', async () => {
    const batch = Array.from({ length: 10 }, (_, i) => call('five', i % 2 ? { a: i, b: 1 } : { b: 1, a: i }, i));
    const res = await t.rpc(batch);
    expect(res.status).toBe(200);
    expect(res.headers.get('retry-after')).toBe('60');
    expect(res.body.filter((r: any) => 'result' in r)).toHaveLength(5);
    expect(res.body.filter((r: any) => r.error)).toEqual(
      res.body.filter((r: any) => r.error).map((r: any) => limited('five', 60, r.id)),
    );
    expect(res.body.map((r: any) => r.id)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    // The limit stays used up for single calls too.
    const single = await t.rpc(call('five', { another: true }));
    expect(single.body).toEqual(limited('five', secondsLeftOf(60)));
    expect(single.headers.get('retry-after')).toBe(String(single.body.error.data.retryAfter));
  });

  it('50 concurrent requests against a limit of 10: exactly 10 succeed', async () => {
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => t.rpc(call('ten', undefined, i))));
    const ok = answers.filter((a) => a.body.result === 'ok');
    const denied = answers.filter((a) => a.body.error);
    expect(ok).toHaveLength(10);
    expect(denied).toHaveLength(40);
    for (const d of denied) {
      // The seconds left in the 60 s window: 60, or a little less when the machine is slow.
      const { retryAfter } = d.body.error.data;
      expect(retryAfter).toBeGreaterThan(50);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(d.body.error).toEqual({ code: -32003, message: 'Rate limit exceeded for ten', data: { retryAfter } });
      expect(d.headers.get('retry-after')).toBe(String(retryAfter));
    }
    for (const a of ok) expect(a.headers.get('retry-after')).toBeNull();
  });

  it('notifications count (their handler runs) and get no answer once over the limit', async () => {
    const methods = t.app.get(Limited);
    methods.runs = 0;
    const res = await t.post([notification('notify'), notification('notify'), notification('notify'), notification('notify')]);
    expect(res.status).toBe(204);
    expect(methods.runs).toBe(3);
    expect((await t.rpc(call('notify'))).body).toEqual(limited('notify', secondsLeftOf(60)));
  });

  it('Retry-After carries the largest retryAfter of the batch', async () => {
    const res = await t.rpc([call('short', undefined, 1), call('short', undefined, 2), call('long', undefined, 3), call('long', undefined, 4)]);
    expect(res.body).toEqual([
      { jsonrpc: '2.0', result: 'short', id: 1 },
      limited('short', 10, 2),
      { jsonrpc: '2.0', result: 'long', id: 3 },
      limited('long', 60, 4),
    ]);
    expect(res.headers.get('retry-after')).toBe('60');
  });

  it('scope user: one counter per user, anonymous callers per IP', async () => {
    const results = async (init?: { headers: Record<string, string> }) => {
      const out: unknown[] = [];
      for (let i = 0; i < 3; i++) out.push((await t.rpc(call('perUser'), init)).body.result ?? 'denied');
      return out;
    };
    expect(await results(as('ann'))).toEqual(['u', 'u', 'denied']);
    expect(await results(as('bob'))).toEqual(['u', 'u', 'denied']);
    expect(await results()).toEqual(['u', 'u', 'denied']);
  });

  it('scope ip: users on one address share it; scope global: everyone shares it', async () => {
    expect((await t.rpc(call('perIp'), as('ann'))).body.result).toBe('ip');
    expect((await t.rpc(call('perIp'), as('bob'))).body.result).toBe('ip');
    expect((await t.rpc(call('perIp'), as('cid'))).body.error.code).toBe(-32003);
    expect((await t.rpc(call('everyone'), as('ann'))).body.result).toBe('g');
    expect((await t.rpc(call('everyone'))).body.result).toBe('g');
    expect((await t.rpc(call('everyone'), as('bob'))).body.error.code).toBe(-32003);
  });

  it('the window resets after interval seconds', async () => {
    expect((await t.rpc([call('window', undefined, 1), call('window', undefined, 2), call('window', undefined, 3)])).body.map((r: any) => r.result ?? r.error.code)).toEqual(['w', 'w', -32003]);
    await new Promise((r) => setTimeout(r, 1100));
    expect((await t.rpc(call('window'))).body.result).toBe('w');
  });

  it('blockDuration keeps an offender blocked past the window', async () => {
    expect((await t.rpc(call('blocking'))).body.result).toBe('b');
    expect((await t.rpc(call('blocking'))).body).toEqual(limited('blocking', 3));
    await new Promise((r) => setTimeout(r, 1100));
    expect((await t.rpc(call('blocking'))).body.error.code).toBe(-32003);
  });

  it('a bypass provider lifts the limit for the calls it chooses, without counting them', async () => {
    for (let i = 0; i < 3; i++) expect((await t.rpc(call('internal'), { headers: { 'x-internal': 'yes' } })).body.result).toBe('i');
    expect((await t.rpc(call('internal'))).body.result).toBe('i');
    expect((await t.rpc(call('internal'))).body.error.code).toBe(-32003);
  });

  it('@SkipThrottle({ rpc: true }) on the class lifts @RpcRateLimit', async () => {
    for (let i = 0; i < 3; i++) expect((await t.rpc(call('skipped'))).body.result).toBe('s');
  });
});

describe('@RpcRateLimit with httpStatus.enabled', () => {
  @Injectable()
  class One {
    @RpcMethod('once') @RpcRateLimit({ limit: 1, interval: 30, scope: 'global' }) once() { return 1; }
  }
  @Module({ imports: [JsonRpcModule.forRoot({ httpStatus: { enabled: true } })], providers: [One] })
  class StatusModule {}

  it('answers 429 with Retry-After', async () => {
    const t = await startTestApp(StatusModule);
    try {
      expect((await t.rpc(call('once'))).status).toBe(200);
      const res = await t.rpc([call('once', undefined, 1), call('once', undefined, 2)]);
      expect(res.status).toBe(429);
      expect(res.body).toEqual([limited('once', secondsLeftOf(30), 1), limited('once', secondsLeftOf(30), 2)]);
      expect(res.headers.get('retry-after')).toBe(String(res.body[0].error.data.retryAfter));
    } finally {
      await t.close();
    }
  });
});

describe("with the app's ThrottlerModule", () => {
  /** The app's own storage, wrapped to see the keys it is asked to count. */
  class RecordingStorage {
    readonly keys: string[] = [];
    private readonly counts = new Map<string, number>();
    async increment(key: string, ttl: number, limit: number) {
      this.keys.push(key);
      const hits = (this.counts.get(key) ?? 0) + 1;
      this.counts.set(key, hits);
      return { totalHits: hits, timeToExpire: Math.ceil(ttl / 1000), isBlocked: hits > limit, timeToBlockExpire: hits > limit ? Math.ceil(ttl / 1000) : 0 };
    }
  }
  const storage = new RecordingStorage();

  @Injectable()
  class Methods {
    @RpcMethod('limited') @RpcRateLimit({ limit: 2, interval: 20, scope: 'global' }) limited() { return 'l'; }
    @RpcMethod('throttled') @Throttle({ default: { limit: 2, ttl: 40_000 } }) throttled() { return 't'; }
    @RpcMethod('free') @SkipThrottle() free() { return 'f'; }
  }

  @Module({
    imports: [ThrottlerModule.forRoot({ throttlers: [{ limit: 100, ttl: 60_000 }], storage }), JsonRpcModule.forRoot()],
    providers: [Methods, { provide: APP_GUARD, useClass: RpcThrottlerGuard }],
  })
  class ThrottledModule {}

  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(ThrottledModule);
  });
  afterAll(() => t.close());

  it('@RpcRateLimit counts in the app storage, keyed by RPC method', async () => {
    storage.keys.length = 0;
    const res = await t.rpc([call('limited', undefined, 1), call('limited', undefined, 2), call('limited', undefined, 3)]);
    expect(res.body.map((r: any) => r.result ?? r.error)).toEqual(['l', 'l', { code: -32003, message: 'Rate limit exceeded for limited', data: { retryAfter: 20 } }]);
    expect(res.headers.get('retry-after')).toBe('20');
    // The app guard (the module's `default` throttler) and @RpcRateLimit (`rpc`) each count every call.
    expect(storage.keys.filter((k) => k === '"limited":rpc:global')).toHaveLength(3);
    expect(storage.keys.filter((k) => k.startsWith('"limited":default:'))).toHaveLength(3);
  });

  it('RpcThrottlerGuard honours @Throttle per call, keyed by RPC method', async () => {
    const res = await t.rpc([call('throttled', undefined, 1), call('throttled', undefined, 2), call('throttled', undefined, 3)]);
    expect(res.body.map((r: any) => r.result ?? r.error)).toEqual(['t', 't', { code: -32003, message: 'Rate limit exceeded for throttled', data: { retryAfter: 40 } }]);
    expect(res.headers.get('retry-after')).toBe('40');
  });

  it('and @SkipThrottle', async () => {
    storage.keys.length = 0;
    const res = await t.rpc(Array.from({ length: 5 }, (_, i) => call('free', undefined, i)));
    expect(res.body.map((r: any) => r.result)).toEqual(['f', 'f', 'f', 'f', 'f']);
    expect(storage.keys).toEqual([]);
  });

  it('ThrottlerStorage resolves to the app storage', () => {
    expect(t.app.get(ThrottlerStorage, { strict: false })).toBe(storage);
  });
});

describe("the app's subclass of RpcThrottlerGuard as APP_GUARD", () => {
  /** Counts per API key rather than per client IP: the throttler's own `getTracker` hook, overridden. */
  @Injectable()
  class ApiKeyThrottlerGuard extends RpcThrottlerGuard {
    protected override async getTracker(req: Record<string, any>): Promise<string> {
      return `key:${String(req.headers['x-api-key'])}`;
    }
  }

  @Injectable()
  class Methods {
    @RpcMethod('ping') ping() { return 'pong'; }
  }

  @Module({
    imports: [ThrottlerModule.forRoot({ throttlers: [{ limit: 2, ttl: 60_000 }] }), JsonRpcModule.forRoot()],
    providers: [Methods, { provide: APP_GUARD, useClass: ApiKeyThrottlerGuard }],
  })
  class ApiKeyModule {}

  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(ApiKeyModule);
  });
  afterAll(() => t.close());

  it("keys each RPC call by the subclass's tracker, and answers -32003 as RpcThrottlerGuard does", async () => {
    const batch = [call('ping', undefined, 1), call('ping', undefined, 2), call('ping', undefined, 3)];
    const a = await t.rpc(batch, { headers: { 'x-api-key': 'a' } });
    expect(a.body.map((r: any) => r.result ?? r.error)).toEqual(['pong', 'pong', { code: -32003, message: 'Rate limit exceeded for ping', data: { retryAfter: 60 } }]);
    expect(a.headers.get('retry-after')).toBe('60');
    // Same IP, another key: its own budget (the stock tracker, the IP, would refuse it).
    const b = await t.rpc(call('ping'), { headers: { 'x-api-key': 'b' } });
    expect(b.body.result).toBe('pong');
  });
});
