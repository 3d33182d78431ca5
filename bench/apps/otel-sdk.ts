/**
 * The telemetry a bench app runs under, by `BENCH_OTEL` mode — shared by the module's app
 * (`otel.app.ts`) and the bare-Fastify floor (`otel-floor.app.ts`), so both pay the same SDK.
 * - `sdk`: an OpenTelemetry SDK registered first — AsyncLocalStorage context manager,
 *   `BasicTracerProvider` with a `BatchSpanProcessor` and a no-op exporter, a `MeterProvider`
 *   whose periodic reader exports to nowhere every 60 s;
 * - `context`: only the SDK's context manager, used once — from then on Node tracks the context
 *   through every promise: what any SDK with a context manager costs before a span;
 * - anything else: no SDK (the `@opentelemetry/api` no-ops).
 */
export async function registerBenchTelemetry(mode: string): Promise<void> {
  if (mode === 'context') {
    const { context, ROOT_CONTEXT } = await import('@opentelemetry/api');
    const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    context.with(ROOT_CONTEXT, () => undefined);
    return;
  }
  if (mode !== 'sdk') return;
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
