/**
 * Bench app for the `chaos` workload: durable streams on a RedisStreamStore and the `redis`
 * option (shared rate limit and cache) on the same Redis (`CHAOS_REDIS_URL`, `CHAOS_KEY_PREFIX`),
 * which the workload kills and restarts again and again.
 * - `chaos.ticks` `{intervalMs}` yields `{k}` (k = 1, 2, ...) every `intervalMs` until cancelled;
 * - `chaos.limited` is rate-limited (a limit it never reaches; `onStoreError` 'allow') and cached
 *   for one second: it must keep answering through every outage;
 * - `GET /__mem`: process memory after a GC (run with --expose-gc); `GET /__lag`: the event loop's
 *   worst delay so far.
 * Prints `LISTENING <port>`. Logs go to stdout (warn and up), where the workload counts them.
 */
import 'reflect-metadata';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { JsonRpcModule, RedisStreamStore, RpcCache, RpcMethod, RpcRateLimit, RpcStream, type RpcContext } from '@nest-jsonrpc/server';
import { addMemoryProbe } from './memory-probe.js';

const url = process.env.CHAOS_REDIS_URL!;
const keyPrefix = process.env.CHAOS_KEY_PREFIX ?? 'bench:chaos:';
const store = new RedisStreamStore({ url, keyPrefix, heartbeatMs: Number(process.env.CHAOS_HEARTBEAT_MS ?? 5000) });

@Injectable()
class ChaosMethods {
  @RpcMethod('chaos.ticks')
  @RpcStream({ durable: true })
  async *ticks(params: { intervalMs: number }, ctx: RpcContext) {
    for (let k = 1; !ctx.signal.aborted; k++) {
      yield { k };
      await new Promise((resolve) => setTimeout(resolve, params.intervalMs));
    }
  }

  private calls = 0;

  @RpcMethod('chaos.limited')
  @RpcRateLimit({ limit: 1_000_000, interval: 60, scope: 'global' })
  @RpcCache({ ttl: 1 })
  limited() {
    return { call: ++this.calls };
  }
}

@Module({
  imports: [
    JsonRpcModule.forRoot({
      // Subscribers ride out outages of up to two minutes (the workload measures catch-up, not the grace).
      durable: { enabled: true, store, outageGraceMs: 120_000 },
      redis: { url, keyPrefix },
    }),
  ],
  providers: [ChaosMethods],
})
class ChaosBenchModule {}

const app = await NestFactory.create<NestFastifyApplication>(ChaosBenchModule, new FastifyAdapter(), { logger: ['error', 'warn', 'log'] });
addMemoryProbe(app.getHttpAdapter().getInstance());
// How late this process's event loop ran (a loaded machine delays timers, heartbeats included).
const lag = monitorEventLoopDelay({ resolution: 20 });
lag.enable();
app.getHttpAdapter().getInstance().get('/__lag', async () => ({ maxMs: lag.max / 1e6, p99Ms: lag.percentile(99) / 1e6 }));
await app.listen(0, '127.0.0.1');
console.log(`LISTENING ${(app.getHttpServer().address() as { port: number }).port}`);
