/**
 * Bench app for the `soak` workload: durable streams on SQLite (`SOAK_DB`) or Redis
 * (`SOAK_STORE=redis`, `REDIS_URL`, `SOAK_KEY_PREFIX`).
 * - `soak.idle` waits until cancelled (idle subscribers);
 * - `soak.ticks` `{n, intervalMs}` waits for `POST /__go`, then yields `{k}` n times, every
 *   `intervalMs` (0: as fast as it can);
 * - `GET /__commits/:id` -> `{ "<event id>": <epoch ms> }`: when the commit of each event began
 *   (taken just before the store's append, so a latency measured from it includes the commit);
 * - `GET /__mem`: process memory after a GC (run with --expose-gc); `GET /__cpu`: process.cpuUsage().
 */
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import {
  JsonRpcModule,
  RedisStreamStore,
  RpcMethod,
  RpcStream,
  SqliteStreamStore,
  type AppendOutcome,
  type PendingDurableEvent,
  type RpcContext,
  type StreamStore,
} from '@nest-jsonrpc/server';
import { addMemoryProbe } from './memory-probe.js';

const commitStarts = new Map<string, Record<number, number>>();
const epochMs = () => performance.timeOrigin + performance.now();

/** Records when each event's commit began; ids are known once the append returns. */
function timed<T extends new (...args: any[]) => StreamStore>(Base: T): T {
  return class extends Base {
    override async append(id: string, events: PendingDurableEvent[], terminal: boolean, now: number): Promise<AppendOutcome> {
      const began = epochMs();
      const outcome = await super.append(id, events, terminal, now);
      if (outcome.ok) {
        let times = commitStarts.get(id);
        if (!times) commitStarts.set(id, (times = {}));
        for (const event of events) times[event.id] = began;
      }
      return outcome;
    }
  };
}

const store: StreamStore =
  process.env.SOAK_STORE === 'redis'
    ? new (timed(RedisStreamStore))({ url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', keyPrefix: process.env.SOAK_KEY_PREFIX, heartbeatMs: 1000 })
    : new (timed(SqliteStreamStore))({ filename: process.env.SOAK_DB ?? './data/bench-soak.sqlite' });

let go: () => void = () => undefined;
let started = new Promise<void>((resolve) => (go = resolve));

@Injectable()
class SoakStreams {
  @RpcMethod('soak.idle')
  @RpcStream({ durable: true })
  async *idle(_params: unknown, ctx: RpcContext) {
    await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
    yield { stopped: true };
  }

  @RpcMethod('soak.ticks')
  @RpcStream({ durable: true })
  async *ticks(params: { n: number; intervalMs: number }, ctx: RpcContext) {
    await started;
    for (let k = 1; k <= params.n && !ctx.signal.aborted; k++) {
      if (params.intervalMs > 0) await new Promise((resolve) => setTimeout(resolve, params.intervalMs));
      yield { k };
    }
  }
}

@Module({
  imports: [JsonRpcModule.forRoot({ durable: { enabled: true, store, keepAliveMs: 15_000 } })],
  providers: [SoakStreams],
})
class SoakBenchModule {}

const app = await NestFactory.create<NestFastifyApplication>(SoakBenchModule, new FastifyAdapter(), { logger: ['error', 'warn'] });
const fastify = app.getHttpAdapter().getInstance();
addMemoryProbe(fastify);
fastify.get('/__cpu', async () => process.cpuUsage());
fastify.post('/__go', async () => {
  go();
  started = new Promise<void>((resolve) => (go = resolve));
  return { ok: true };
});
fastify.get('/__commits/:id', async (request) => commitStarts.get((request.params as { id: string }).id) ?? {});
await app.listen(0, '127.0.0.1');
console.log(`LISTENING ${(app.getHttpServer().address() as { port: number }).port}`);
