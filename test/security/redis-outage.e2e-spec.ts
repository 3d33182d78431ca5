/**
 * The `redis` option when Redis is not there or goes away: the app still starts; a cached call is
 * answered uncached at once (a cache error is a miss); a rate-limited call follows its
 * `onStoreError` — `'allow'` (the default) runs it uncounted, `'deny'` refuses it at once with
 * -32603 `Rate limit store unavailable`; the outage is logged once per connection and once by the
 * limits (never a stack per call, never ioredis's "Unhandled error event"), and everything counts
 * and caches again promptly once Redis is back.
 * The first part needs no Redis at all; the second kills a private `redis-server` (SIGKILL) and
 * restarts it on the same data inside the test; the third stops one (SIGSTOP: it answers nothing
 * but keeps every connection open) and continues it — no call waits for it to answer again.
 */
import { Injectable, Module } from '@nestjs/common';
import { JsonRpcModule, RpcCache, RpcMethod, RpcRateLimit, type JsonRpcModuleOptions } from '@nest-jsonrpc/server';
import { eventually } from '../support/async.js';
import { describeWithRedisServer, freePort, PrivateRedis } from '../support/redis-server.js';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';
import { call, startupError } from './security-apps.js';

@Injectable()
class Outage {
  runs = 0;
  @RpcMethod('cached') @RpcCache({ ttl: 60 })
  cached() { return { run: ++this.runs }; }

  /** Follows the module's `rateLimit.onStoreError` (default 'allow'). */
  @RpcMethod('limited') @RpcRateLimit({ limit: 3, interval: 60, scope: 'global' })
  limited() { return 'ok'; }

  @RpcMethod('strict') @RpcRateLimit({ limit: 100, interval: 60, scope: 'global', onStoreError: 'deny' })
  strict() { return 'ok'; }
}

function outageModule(redis: JsonRpcModuleOptions['redis'], rateLimit?: JsonRpcModuleOptions['rateLimit']) {
  @Module({ imports: [JsonRpcModule.forRoot({ redis, rateLimit })], providers: [Outage] })
  class OutageModule {}
  return OutageModule;
}

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = Date.now();
  const value = await work();
  return { value, ms: Date.now() - started };
}

const UNAVAILABLE = { code: -32603, message: 'Rate limit store unavailable' };

/** Records what reaches the console (ioredis prints "Unhandled error event" through console.error), passing it on. */
function watchConsole(): { lines: string[]; restore: () => void } {
  const lines: string[] = [];
  const original = console.error;
  console.error = (...args: unknown[]) => {
    lines.push(args.map(String).join(' '));
    original.apply(console, args);
  };
  return { lines, restore: () => (console.error = original) };
}

describe('the redis option with no Redis reachable', () => {
  let app: TestApp;
  let console_: ReturnType<typeof watchConsole>;
  beforeAll(async () => {
    console_ = watchConsole();
    const port = await freePort(); // nothing listens there
    app = await startTestApp(outageModule({ url: `redis://127.0.0.1:${port}`, keyPrefix: `nest-jsonrpc-outage:${process.pid}:` }));
  }, 15_000);
  afterAll(async () => {
    const closing = await timed(() => app?.close());
    expect(closing.ms).toBeLessThan(2000);
    console_.restore();
    expect(console_.lines.filter((l) => l.includes('Unhandled error event'))).toEqual([]);
  });

  it('answers a cached method uncached, at once, every time', async () => {
    const before = app.app.get(Outage).runs;
    for (const run of [1, 2, 3]) {
      const { value, ms } = await timed(() => app.rpc(call('cached')));
      expect(value.body).toEqual({ jsonrpc: '2.0', result: { run: before + run }, id: 1 });
      expect(ms).toBeLessThan(1000);
    }
  });

  it("lets a limited call through uncounted by default (onStoreError 'allow'), past its limit of 3", async () => {
    for (let i = 0; i < 5; i++) {
      const { value, ms } = await timed(() => app.rpc(call('limited')));
      expect(value.body).toEqual({ jsonrpc: '2.0', result: 'ok', id: 1 });
      expect(ms).toBeLessThan(1000);
    }
  });

  it("refuses at once with -32603 a call whose limit says onStoreError: 'deny'", async () => {
    const { value, ms } = await timed(() => app.rpc(call('strict')));
    expect(value.body).toEqual({ jsonrpc: '2.0', error: UNAVAILABLE, id: 1 });
    expect(ms).toBeLessThan(1000);
  });

  it('logs the outage once per connection and once for the limits (the cache store reports a miss, not an error), without a stack per call', async () => {
    // Limited and cached calls of its own (the file's tests may run in any order).
    for (const method of ['limited', 'strict', 'cached', 'limited']) await app.rpc(call(method));
    const warnings = app.logger.lines.filter((l) => l.level === 'warn').map((l) => l.message);
    expect(warnings.filter((w) => /^Redis connection for rate limits lost: .*ECONNREFUSED/.test(w))).toHaveLength(1);
    expect(warnings.filter((w) => /^Redis connection for the result cache lost: .*ECONNREFUSED/.test(w))).toHaveLength(1);
    expect(warnings.filter((w) => w.startsWith('Rate limits cannot be counted'))).toHaveLength(1);
    expect(app.logger.text('error')).toBe('');
  });
});

describe('bad redis options fail startup, every problem named', () => {
  const failure = async (redis: unknown) => (await startupError(outageModule(redis as never))).message;

  it('one node (url) or a cluster (cluster.nodes), never both, never neither', async () => {
    expect(await failure({ url: 'http://127.0.0.1:6379' })).toContain('"redis.url" must be a redis:// or rediss:// URL (or give "redis.cluster")');
    expect(await failure({ url: 'redis://a:1', cluster: { nodes: ['redis://b:2'] } })).toContain('"redis" takes "url" (one node) or "cluster", not both');
    expect(await failure({ cluster: { nodes: [] } })).toContain('"redis.cluster.nodes" must be a non-empty array of redis:// or rediss:// URLs');
    expect(await failure({ cluster: { nodes: ['redis://a:1'], slots: 3 } })).toContain('unknown option "redis.cluster.slots"');
  });
});

const describeOutage = describeWithRedisServer('the rate-limit and cache outage test');

describeOutage('the redis option when Redis is killed (SIGKILL) and restarted', () => {
  let redis: PrivateRedis;
  let app: TestApp;
  let console_: ReturnType<typeof watchConsole>;
  beforeAll(async () => {
    console_ = watchConsole();
    redis = await PrivateRedis.start();
  });
  afterEach(async () => {
    await app?.close();
    if (!redis.running) await redis.restart();
  });
  afterAll(async () => {
    await redis?.stop();
    console_.restore();
    expect(console_.lines.filter((l) => l.includes('Unhandled error event'))).toEqual([]);
  });

  it("rateLimit.onStoreError: 'allow' (the default): uncounted while down, counted again (the window kept) once back; cache misses, then hits", async () => {
    app = await startTestApp(outageModule({ url: redis.url, keyPrefix: 'allow:' }));
    const outage = app.app.get(Outage);
    expect((await app.rpc(call('cached'))).body.result).toEqual({ run: 1 });
    expect((await app.rpc(call('cached'))).body.result).toEqual({ run: 1 });
    expect((await app.rpc(call('limited'))).body.result).toBe('ok'); // 1 of 3, stored in Redis

    await redis.kill();
    for (let i = 0; i < 5; i++) {
      const limited = await timed(() => app.rpc(call('limited')));
      expect(limited.ms).toBeLessThan(1000);
      expect(limited.value.body.result).toBe('ok');
    }
    const cached = await timed(() => app.rpc(call('cached')));
    expect(cached.ms).toBeLessThan(1000);
    expect(cached.value.body.result).toEqual({ run: 2 }); // a miss: the handler ran
    const strict = await timed(() => app.rpc(call('strict')));
    expect(strict.ms).toBeLessThan(1000);
    expect(strict.value.body.error).toEqual(UNAVAILABLE);

    const restartedAt = Date.now();
    await redis.restart();
    // Reconnects within half a second of Redis returning; poll for the first counted call.
    let answer = await app.rpc(call('limited'));
    let tries = 0;
    while (app.logger.lines.every((l) => l.message !== 'Rate limits are counted again') && Date.now() - restartedAt < 5000) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      answer = await app.rpc(call('limited'));
      tries++;
    }
    expect(Date.now() - restartedAt).toBeLessThan(2000);
    // The window survived the restart (append-only file): 1 before, then counted calls up to 3.
    const counted = [answer];
    for (let i = 0; i < 3; i++) counted.push(await app.rpc(call('limited')));
    expect(counted.map((a) => a.body.result ?? a.body.error.code)).toEqual(['ok', 'ok', -32003, -32003]);
    expect(tries).toBeLessThan(40);
    // The entry written before the kill is served again from Redis, once the cache's own
    // connection (not the rate limits') is back: on a loaded machine it can come a moment later.
    await eventually(() => app.logger.lines.some((l) => l.message === 'Redis connection for the result cache is back'), 5000, 'the result cache connection back');
    expect((await app.rpc(call('cached'))).body.result).toEqual({ run: 1 });
    expect(outage.runs).toBe(2);

    const lines = app.logger.lines.map((l) => `${l.level} ${l.message}`);
    expect(lines.filter((l) => /^warn Redis connection for rate limits lost/.test(l))).toHaveLength(1);
    expect(lines.filter((l) => /^warn Redis connection for the result cache lost/.test(l))).toHaveLength(1);
    expect(lines.filter((l) => l === 'log Redis connection for rate limits is back')).toHaveLength(1);
    expect(lines.filter((l) => l === 'log Redis connection for the result cache is back')).toHaveLength(1);
    expect(lines.filter((l) => l.startsWith('warn Rate limits cannot be counted'))).toHaveLength(1);
    expect(lines.filter((l) => l === 'log Rate limits are counted again')).toHaveLength(1);
    expect(app.logger.text('error')).toBe('');
  }, 30_000);

  it("rateLimit: { onStoreError: 'deny' } alone: every limit refuses while down (-32603, at once), none is lifted", async () => {
    app = await startTestApp(outageModule({ url: redis.url, keyPrefix: 'deny:' }, { onStoreError: 'deny' }));
    expect((await app.rpc(call('limited'))).body.result).toBe('ok');
    await redis.kill();
    for (const method of ['limited', 'strict']) {
      const { value, ms } = await timed(() => app.rpc(call(method)));
      expect(value.body).toEqual({ jsonrpc: '2.0', error: UNAVAILABLE, id: 1 });
      expect(ms).toBeLessThan(1000);
    }
    await redis.restart();
    let answer = await app.rpc(call('limited'));
    const deadline = Date.now() + 5000;
    while (answer.body.result !== 'ok' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      answer = await app.rpc(call('limited'));
    }
    expect(answer.body.result).toBe('ok');
  }, 30_000);
});

/**
 * The answer of `request`, or 'no answer' if it has none by the time the guard gives up — long
 * after the commands' bound, so only a call that waits for Redis gets it. Redis is continued only
 * after this returns, so an answer here came while Redis was still stopped.
 */
async function answeredWhileStopped<T>(request: Promise<T>): Promise<T | 'no answer'> {
  let timer: NodeJS.Timeout | undefined;
  const guard = new Promise<'no answer'>((resolve) => (timer = setTimeout(() => resolve('no answer'), 8000)));
  try {
    return await Promise.race([request, guard]);
  } finally {
    clearTimeout(timer);
  }
}

describeOutage('the redis option when Redis stops answering (SIGSTOP) with its connections open, then continues', () => {
  let redis: PrivateRedis;
  let app: TestApp | undefined;
  beforeAll(async () => {
    redis = await PrivateRedis.start();
  });
  afterEach(async () => {
    redis.resume();
    await app?.close();
    app = undefined;
  });
  afterAll(async () => {
    redis?.resume();
    await redis?.stop();
  });

  it("'allow' runs a limited call uncounted and a cached method runs uncached, answered before Redis continues; logged once, 'back' after", async () => {
    app = await startTestApp(outageModule({ url: redis.url, keyPrefix: 'stop-allow:' }));
    expect((await app.rpc(call('cached'))).body.result).toEqual({ run: 1 });
    expect((await app.rpc(call('cached'))).body.result).toEqual({ run: 1 });
    expect((await app.rpc(call('limited'))).body.result).toBe('ok'); // 1 of 3, in Redis

    redis.pause();
    for (let i = 0; i < 4; i++) {
      const limited = await answeredWhileStopped(app.rpc(call('limited')));
      expect(limited === 'no answer' ? limited : limited.body).toEqual({ jsonrpc: '2.0', result: 'ok', id: 1 });
    }
    const cached = await answeredWhileStopped(app.rpc(call('cached')));
    expect(cached === 'no answer' ? cached : cached.body).toEqual({ jsonrpc: '2.0', result: { run: 2 }, id: 1 }); // a miss: the handler ran
    const strict = await answeredWhileStopped(app.rpc(call('strict')));
    expect(strict === 'no answer' ? strict : strict.body).toEqual({ jsonrpc: '2.0', error: UNAVAILABLE, id: 1 });

    const warnings = () => app!.logger.lines.filter((l) => l.level === 'warn').map((l) => l.message);
    expect(warnings().filter((w) => w === 'Redis connection for rate limits lost: Command timed out')).toHaveLength(1);
    expect(warnings().filter((w) => w === 'Redis connection for the result cache lost: Command timed out')).toHaveLength(1);
    expect(warnings().filter((w) => w.startsWith('Rate limits cannot be counted (Rate limit store unavailable: Command timed out)'))).toHaveLength(1);

    redis.resume();
    // Counted again. The calls let through while Redis was stopped had sent their counts, which
    // a continued Redis runs (before this call's, same connection): 1 + 4 is past the limit of 3.
    const after = await app.rpc(call('limited'));
    expect(after.body.error?.code).toBe(-32003);
    expect(app.logger.lines.filter((l) => l.message === 'Rate limits are counted again')).toHaveLength(1);
    // The entry written before the stop is served again.
    await eventually(async () => (await app!.rpc(call('cached'))).body.result?.run === 1, 5000, 'the cached entry served again');
    const lines = app.logger.lines.map((l) => `${l.level} ${l.message}`);
    expect(lines.filter((l) => l === 'log Redis connection for rate limits is back')).toHaveLength(1);
    expect(lines.filter((l) => l === 'log Redis connection for the result cache is back')).toHaveLength(1);
    expect(lines.filter((l) => /^warn Redis connection for .* lost/.test(l))).toHaveLength(2);
    expect(app.logger.text('error')).toBe('');
  }, 30_000);

  it("'deny' refuses a limited call with -32603 before Redis continues, and counts again after", async () => {
    app = await startTestApp(outageModule({ url: redis.url, keyPrefix: 'stop-deny:' }, { onStoreError: 'deny' }));
    expect((await app.rpc(call('limited'))).body.result).toBe('ok');
    redis.pause();
    for (const method of ['limited', 'strict']) {
      const answer = await answeredWhileStopped(app.rpc(call(method)));
      expect(answer === 'no answer' ? answer : answer.body).toEqual({ jsonrpc: '2.0', error: UNAVAILABLE, id: 1 });
    }
    expect(app.logger.lines.filter((l) => l.message === 'Redis connection for rate limits lost: Command timed out')).toHaveLength(1);
    redis.resume();
    await eventually(async () => (await app!.rpc(call('limited'))).body.result === 'ok', 5000, 'limits counted again');
    expect(app.logger.lines.filter((l) => l.message === 'Redis connection for rate limits is back')).toHaveLength(1);
  }, 30_000);

  it('a limited call whose command is in flight when Redis dies is decided as its connection closes, not held for a resend', async () => {
    app = await startTestApp(outageModule({ url: redis.url, keyPrefix: 'stop-kill:' }, { onStoreError: 'deny' }));
    expect((await app.rpc(call('limited'))).body.result).toBe('ok');
    redis.pause();
    const answer = answeredWhileStopped(app.rpc(call('strict')));
    // Long enough for the call's script to be written to the stopped Redis, well inside the 1 s bound.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await redis.kill();
    const answered = await answer;
    expect(answered === 'no answer' ? answered : answered.body).toEqual({ jsonrpc: '2.0', error: UNAVAILABLE, id: 1 });
    // The reason is the closed connection's, not the bound's: ioredis would otherwise keep the
    // command to send again after a reconnect, and only the bound would end the wait.
    const reasons = app.logger.lines.filter((l) => l.message.startsWith('Rate limits cannot be counted')).map((l) => l.message);
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).not.toContain('Command timed out');
    expect(reasons[0]).toContain('Rate limit store unavailable: Reached the max retries per request limit (which is 0)');
    await redis.restart();
  }, 30_000);
});
