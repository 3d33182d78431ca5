/**
 * `@nest-jsonrpc/server/terminus` over HTTP: a `GET /health` built from `JsonRpcHealthIndicator` (the demo's controller)
 * reports the durable store (SQLite; Redis — a private redis-server killed and restarted), the
 * shared Redis of the `redis` option, and readiness, which turns false as soon as shutdown begins
 * and stays false while durable streams drain.
 */
import { Injectable, Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import {
  JsonRpcModule,
  RedisStreamStore,
  RpcMethod,
  RpcStream,
  SqliteStreamStore,
  type JsonRpcModuleOptions,
  type PendingDurableEvent,
  type RpcContext,
} from '@nest-jsonrpc/server';
import { JsonRpcHealthModule } from '@nest-jsonrpc/server/terminus';
// The demo's controller: the three indicators in one GET /health.
import { HealthController } from '../../apps/demo/src/health/health.controller.js';
import { eventually } from '../support/async.js';
import { describeWithRedisServer, PrivateRedis } from '../support/redis-server.js';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';
import { tempDir } from '../durable/support/durable-fixtures.js';


@Injectable()
class Waiter {
  /** Runs until its stream is stopped. */
  @RpcMethod('wait')
  @RpcStream({ durable: true })
  async *wait(_params: unknown, ctx: RpcContext) {
    yield { started: true };
    await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve));
  }
}

function healthApp(options: JsonRpcModuleOptions, providers = [Waiter]) {
  @Module({ imports: [JsonRpcModule.forRoot(options), TerminusModule, JsonRpcHealthModule], controllers: [HealthController], providers })
  class HealthApp {}
  return HealthApp;
}

async function health(app: TestApp): Promise<{ status: number; body: any }> {
  const res = await fetch(`${app.url}/health`);
  return { status: res.status, body: await res.json() };
}

describe('health indicators: SQLite store, no redis option', () => {
  const tmp = tempDir();
  let app: TestApp;
  afterAll(async () => {
    await app?.close();
    tmp.remove();
  });

  it('reports the store up with its latency, the shared store as not enabled, and readiness', async () => {
    app = await startTestApp(healthApp({ durable: { enabled: true, store: new SqliteStreamStore({ filename: tmp.file() }) } }));
    const { status, body } = await health(app);
    expect(status).toBe(200);
    expect(body).toEqual({
      status: 'ok',
      info: {
        durable_store: { status: 'up', kind: 'sqlite', latencyMs: expect.any(Number), detail: tmp.file() },
        redis: { status: 'up', enabled: false },
        jsonrpc: { status: 'up', draining: false, runningStreams: 0 },
      },
      error: {},
      details: expect.any(Object),
    });
  });

  it('durable streams off: the store is reported as not enabled', async () => {
    const off = await startTestApp(healthApp({}, []));
    try {
      expect((await health(off)).body.info.durable_store).toEqual({ status: 'up', enabled: false });
    } finally {
      await off.close();
    }
  });
});

/** A SQLite store whose commits take `delayMs`: a drain then lasts long enough to be seen. */
class SlowCommitStore extends SqliteStreamStore {
  delayMs = 0;
  override async append(id: string, events: PendingDurableEvent[], terminal: boolean, now: number) {
    if (this.delayMs) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
    return super.append(id, events, terminal, now);
  }
}

describe('health indicators: readiness while shutdown drains durable streams', () => {
  const tmp = tempDir();
  afterAll(() => tmp.remove());

  it('turns false (503, draining: true) once shutdown begins, while the running stream is stopped', async () => {
    const store = new SlowCommitStore({ filename: tmp.file() });
    const app = await startTestApp(healthApp({ durable: { enabled: true, store } }));
    const started = await app.rpc({ jsonrpc: '2.0', method: 'wait', id: 1 });
    expect(started.body.result.status).toBe('running');
    await eventually(async () => (await health(app)).body.info?.jsonrpc?.runningStreams === 1, 2000);
    store.delayMs = 1500; // the terminal commit of the drain
    const closing = app.close();
    const draining = await eventually(async () => {
      const answer = await health(app).catch(() => undefined);
      return answer?.status === 503 ? answer : undefined;
    }, 1400);
    // Terminus says so too (its own state from the same moment), and our indicator says why.
    expect(draining.body.status).toBe('shutting_down');
    expect(draining.body.error.jsonrpc).toEqual({ status: 'down', draining: true, runningStreams: 1 });
    await closing;
  });
});

describeWithRedisServer('the Redis health indicators')('health indicators on Redis, killed and restarted', () => {
  let redis: PrivateRedis;
  let app: TestApp;
  let store: RedisStreamStore;
  beforeAll(async () => {
    redis = await PrivateRedis.start();
    store = new RedisStreamStore({ url: redis.url, keyPrefix: 'health:' });
    app = await startTestApp(healthApp({ durable: { enabled: true, store }, redis: { url: redis.url, keyPrefix: 'health:' } }));
  });
  afterAll(async () => {
    await app?.close();
    await store?.close();
    await redis?.stop();
  });

  it('up with the latency; down (503, with why) while Redis is gone; up again once it is back', async () => {
    const up = await health(app);
    expect(up.status).toBe(200);
    expect(up.body.info.durable_store).toEqual({ status: 'up', kind: 'redis', latencyMs: expect.any(Number) });
    expect(up.body.info.redis).toEqual({ status: 'up', kind: 'redis', latencyMs: expect.any(Number) });

    await redis.kill();
    const down = await eventually(async () => {
      const answer = await health(app);
      return answer.status === 503 && answer.body.error.redis ? answer : undefined;
    }, 3000);
    expect(down.body.error.durable_store).toMatchObject({ status: 'down', kind: 'redis', detail: expect.stringMatching(/Stream store unavailable|connection/) });
    expect(down.body.error.redis).toMatchObject({ status: 'down', kind: 'redis', detail: expect.any(String) });
    expect(down.body.info.jsonrpc).toEqual({ status: 'up', draining: false, runningStreams: 0 });

    await redis.restart();
    const back = await eventually(async () => {
      const answer = await health(app);
      return answer.status === 200 ? answer : undefined;
    }, 3000);
    expect(back.body.info.durable_store.status).toBe('up');
    expect(back.body.info.redis.status).toBe('up');
  }, 20_000);
});
