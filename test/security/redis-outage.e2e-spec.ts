/**
 * The `redis` option when Redis is not there: the app still starts, cached calls are answered
 * uncached at once (not after Redis comes back), rate-limited calls are refused at once with
 * -32603, the outage is logged as a warning (not a stack per call, not ioredis's "Unhandled error
 * event"), and everything works again once Redis is back.
 * The first part needs no Redis at all; the second cuts a TCP proxy in front of the real Redis at
 * REDIS_URL (skipped loudly when none answers, failed instead when REQUIRE_REDIS=1).
 */
import { Injectable, Module } from '@nestjs/common';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import { JsonRpcModule, RpcCache, RpcMethod, RpcRateLimit } from '@nest-jsonrpc/server';
import { describeWithRedis } from '../support/redis.js';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';
import { REDIS_URL, call } from './security-apps.js';

@Injectable()
class Outage {
  runs = 0;
  @RpcMethod('cached') @RpcCache({ ttl: 60 })
  cached() { return { run: ++this.runs }; }

  @RpcMethod('limited') @RpcRateLimit({ limit: 100, interval: 60, scope: 'global' })
  limited() { return 'ok'; }
}

function outageModule(url: string, keyPrefix: string) {
  @Module({ imports: [JsonRpcModule.forRoot({ redis: { url, keyPrefix } })], providers: [Outage] })
  class OutageModule {}
  return OutageModule;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = Date.now();
  const value = await work();
  return { value, ms: Date.now() - started };
}

describe('the redis option with no Redis reachable', () => {
  let app: TestApp;
  beforeAll(async () => {
    const port = await freePort(); // nothing listens there
    app = await startTestApp(outageModule(`redis://127.0.0.1:${port}`, `nest-jsonrpc-outage:${process.pid}:`));
  }, 15_000);
  afterAll(async () => {
    const closing = await timed(() => app?.close());
    expect(closing.ms).toBeLessThan(2000);
  });

  it('answers a cached method uncached, at once, every time', async () => {
    for (const run of [1, 2, 3]) {
      const { value, ms } = await timed(() => app.rpc(call('cached')));
      expect(value.body).toEqual({ jsonrpc: '2.0', result: { run }, id: 1 });
      expect(ms).toBeLessThan(1000);
    }
  });

  it('refuses a rate-limited call at once with -32603 (a limit it cannot count is not lifted)', async () => {
    for (let i = 0; i < 3; i++) {
      const { value, ms } = await timed(() => app.rpc(call('limited')));
      expect(value.body).toEqual({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: 1 });
      expect(ms).toBeLessThan(1000);
    }
  });

  it('logs the outage as a warning per client, without a stack per refused call', () => {
    const warnings = app.logger.text('warn');
    expect(warnings).toMatch(/Redis for rate limits unavailable: .*ECONNREFUSED/);
    expect(warnings).toMatch(/Redis for the result cache unavailable: .*ECONNREFUSED/);
    expect(app.logger.text('error')).toBe('');
  });
});

const describeRedis = await describeWithRedis('the Redis outage-and-recovery test');

/** A TCP proxy to Redis that can be cut (every connection dropped, port closed) and restored. */
class CuttableProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  constructor(
    readonly port: number,
    private readonly target: URL,
  ) {}

  async open(): Promise<void> {
    this.server = createServer((client) => {
      const upstream = connect(Number(this.target.port || 6379), this.target.hostname);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
  }

  async cut(): Promise<void> {
    const closed = new Promise((resolve) => this.server!.close(resolve));
    for (const s of this.sockets) s.destroy();
    await closed;
  }
}

describeRedis('the redis option when Redis goes away and comes back', () => {
  const keyPrefix = `nest-jsonrpc-outage-test:${process.pid}:${Date.now()}:`;
  let proxy: CuttableProxy;
  let app: TestApp;
  beforeAll(async () => {
    proxy = new CuttableProxy(await freePort(), new URL(REDIS_URL));
    await proxy.open();
    app = await startTestApp(outageModule(`redis://127.0.0.1:${proxy.port}`, keyPrefix));
  }, 15_000);
  afterAll(async () => {
    await app?.close();
    await proxy?.cut().catch(() => undefined);
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${keyPrefix}*`);
    if (keys.length) await redis.del(...keys);
    await redis.quit();
  });

  it('serves uncached and refuses limited calls at once while cut, and recovers after', async () => {
    const outage = app.app.get(Outage);
    expect((await app.rpc(call('cached'))).body.result).toEqual({ run: 1 });
    expect((await app.rpc(call('cached'))).body.result).toEqual({ run: 1 });
    expect((await app.rpc(call('limited'))).body.result).toBe('ok');

    await proxy.cut();
    await new Promise((resolve) => setTimeout(resolve, 100)); // the clients notice the closed sockets
    const cached = await timed(() => app.rpc(call('cached')));
    expect(cached.ms).toBeLessThan(1000);
    expect(cached.value.body.result).toEqual({ run: 2 });
    const limited = await timed(() => app.rpc(call('limited')));
    expect(limited.ms).toBeLessThan(1000);
    expect(limited.value.body.error).toEqual({ code: -32603, message: 'Internal error' });

    await proxy.open();
    // Both clients reconnect within their backoff (at most 2 s); poll until the limit counts again.
    const deadline = Date.now() + 8000;
    let answer = await app.rpc(call('limited'));
    while (answer.body.result !== 'ok' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      answer = await app.rpc(call('limited'));
    }
    expect(answer.body.result).toBe('ok');
    let hit = await app.rpc(call('cached'));
    while (hit.body.result.run !== 1 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      hit = await app.rpc(call('cached'));
    }
    // The entry written before the cut is served again from Redis.
    expect(hit.body.result).toEqual({ run: 1 });
    expect(outage.runs).toBeGreaterThanOrEqual(2);
  }, 20_000);
});
