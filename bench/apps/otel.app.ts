/**
 * The observability bench app (bench/README.md, "Observability"): the spine's `add`, with `BENCH_OTEL=sdk` an OpenTelemetry SDK registered
 * first (batch span processor with a no-op exporter, a meter provider whose reader exports every
 * 60 s to nowhere), with `BENCH_OTEL=off` observability turned off entirely (the pipeline runs
 * unobserved), else the defaults with no SDK registered.
 */
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { JsonRpcModule, RpcMethod, RpcParam } from '@nest-jsonrpc/server';
import { registerBenchTelemetry } from './otel-sdk.js';

const mode = process.env.BENCH_OTEL ?? 'default';

await registerBenchTelemetry(mode);

@Injectable()
class BenchMethods {
  @RpcMethod('add')
  add(@RpcParam('a') a: number, @RpcParam('b') b: number) {
    return a + b;
  }
}

// BENCH_OBSERVABILITY (JSON) overrides the section, to split a cost between spans and metrics.
const observability =
  mode === 'off' ? { tracing: false, metrics: false, events: false, logCalls: 'none' as const } : JSON.parse(process.env.BENCH_OBSERVABILITY ?? '{}');

@Module({ imports: [JsonRpcModule.forRoot({ observability })], providers: [BenchMethods] })
class BenchModule {}

const app = await NestFactory.create<NestFastifyApplication>(BenchModule, new FastifyAdapter(), { logger: false });
await app.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
process.send?.({ port: (app.getHttpServer().address() as { port: number }).port });
