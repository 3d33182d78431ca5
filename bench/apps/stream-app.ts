/**
 * Bench: the module serving NDJSON streams. Started by bench/workloads/stream.mjs as a child
 * process (`node --expose-gc bench/dist/stream-app.js`); prints `ready <port>` once listening.
 */
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { JsonRpcModule, RpcMethod, RpcStream, StreamFormat } from '@nest-jsonrpc/server';

@Injectable()
class BenchStreams {
  /** `n` rows `{"i":k,"delta":"token"}`, as an LLM token stream would produce them. */
  @RpcMethod('bench.rows')
  @RpcStream({ format: StreamFormat.Ndjson })
  async *rows(p: { n: number }) {
    for (let i = 0; i < p.n; i++) yield { i, delta: 'token' };
  }

  /** Never ends: for the stalled-reader memory check. */
  @RpcMethod('bench.endless')
  @RpcStream({ format: StreamFormat.Ndjson })
  async *endless() {
    for (let i = 0; ; i++) yield { i, delta: 'token' };
  }

  /** Memory after a full GC, so growth measures what is retained, not garbage. */
  @RpcMethod('bench.memory')
  memory() {
    (globalThis as { gc?: () => void }).gc?.();
    return process.memoryUsage();
  }
}

/** BENCH_OBSERVABILITY=off: all four observability options off (the reference row of the stream workload). */
const observability = process.env.BENCH_OBSERVABILITY === 'off' ? { tracing: false, metrics: false, events: false, logCalls: 'none' as const } : undefined;

@Module({ imports: [JsonRpcModule.forRoot({ stream: { enabled: true }, observability })], providers: [BenchStreams] })
class StreamBenchModule {}

const app = await NestFactory.create<NestFastifyApplication>(StreamBenchModule, new FastifyAdapter(), { logger: ['error', 'warn'] });
await app.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
console.log(`ready ${(app.getHttpServer().address() as { port: number }).port}`);
