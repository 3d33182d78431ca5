/**
 * Issue 13's bench app: the spine's `add`, with `BENCH_OTEL=sdk` an OpenTelemetry SDK registered
 * first (batch span processor with a no-op exporter, a meter provider whose reader exports every
 * 60 s to nowhere), with `BENCH_OTEL=off` observability turned off entirely (the pipeline runs
 * unobserved), else the defaults with no SDK registered.
 */
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { JsonRpcModule, RpcMethod, RpcParam } from '@nest-jsonrpc/server';

const mode = process.env.BENCH_OTEL ?? 'default';

if (mode === 'context') {
  // Only the context manager an SDK brings (AsyncLocalStorage), used once — from then on Node 20
  // tracks the context through every promise: what any SDK with a context manager costs before a span.
  const { context, ROOT_CONTEXT } = await import('@opentelemetry/api');
  const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  context.with(ROOT_CONTEXT, () => undefined);
}

if (mode === 'sdk') {
  const { context, metrics, trace } = await import('@opentelemetry/api');
  const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
  const { BasicTracerProvider, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler } = await import('@opentelemetry/sdk-trace-base');
  const { MeterProvider, PeriodicExportingMetricReader, AggregationTemporality } = await import('@opentelemetry/sdk-metrics');
  const { ExportResultCode } = await import('@opentelemetry/core');
  const done = (_items: unknown, callback: (result: { code: number }) => void) => callback({ code: ExportResultCode.SUCCESS });
  const noop = { export: done, shutdown: async () => undefined, forceFlush: async () => undefined };
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  // BENCH_SAMPLE_RATIO: a production-style sampler (ParentBased(TraceIdRatio)); default: every trace.
  const ratio = process.env.BENCH_SAMPLE_RATIO;
  const sampler = ratio === undefined ? undefined : new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(Number(ratio)) });
  trace.setGlobalTracerProvider(new BasicTracerProvider({ sampler, spanProcessors: [new BatchSpanProcessor(noop)] }));
  metrics.setGlobalMeterProvider(
    new MeterProvider({
      readers: [
        new PeriodicExportingMetricReader({
          exporter: { ...noop, selectAggregationTemporality: () => AggregationTemporality.CUMULATIVE },
          exportIntervalMillis: 60_000,
        }),
      ],
    }),
  );
}

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
