/**
 * Bench app for the `durable` workload: durable streams on a SQLite file (`DURABLE_DB`).
 * `bench.events` persists `{"i":k,"delta":"token"}` n times as fast as it can; `bench.idle` waits
 * until cancelled (for idle subscribers). `GET /__stream/:id` reports the stored record (its
 * timestamps time the run), `GET /__mem` the process memory after a GC (run with --expose-gc).
 */
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { DurableStreamRunner, JsonRpcModule, RpcMethod, RpcStream, SqliteStreamStore, type RpcContext } from '@nest-jsonrpc/server';
import { addMemoryProbe } from './memory-probe.js';

@Injectable()
class BenchStreams {
  @RpcMethod('bench.events')
  @RpcStream({ durable: true })
  async *events(params: { n: number }) {
    for (let k = 0; k < params.n; k++) yield { i: k, delta: 'token' };
  }

  @RpcMethod('bench.idle')
  @RpcStream({ durable: true })
  async *idle(_params: unknown, ctx: RpcContext) {
    await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
    yield { stopped: true };
  }
}

@Module({
  imports: [
    JsonRpcModule.forRoot({
      durable: { enabled: true, store: new SqliteStreamStore({ filename: process.env.DURABLE_DB ?? './data/bench-durable.sqlite' }), keepAliveMs: 15_000 },
    }),
  ],
  providers: [BenchStreams],
})
class DurableBenchModule {}

const app = await NestFactory.create<NestFastifyApplication>(DurableBenchModule, new FastifyAdapter(), { logger: false });
const fastify = app.getHttpAdapter().getInstance();
addMemoryProbe(fastify);
fastify.get('/__stream/:id', async (request) => {
  const found = await app.get(DurableStreamRunner).store.lookup((request.params as { id: string }).id);
  return found.found === 'stream' ? found.record : null;
});
await app.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
console.log(`LISTENING ${(app.getHttpServer().address() as { port: number }).port}`);
