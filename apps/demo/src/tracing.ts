/**
 * Observability in the demo (docs/observability.md): `OTEL_TRACES=console npm start` registers an OpenTelemetry SDK that prints
 * every span (one per JSON-RPC call, named by its method; a batch's calls under one `POST /rpc`
 * span, a single call's span being the request's own unless HTTP is instrumented) and
 * `OTEL_METRICS=console` prints `rpc.server.call.duration` and the stream counters every 10 s.
 * Imported first by main.ts, so the SDK is registered before the app starts — the module takes
 * its tracer and meter at the first call anyway. A real app registers an OTLP or Prometheus
 * exporter the same way (README, "Observability").
 */
if (process.env.OTEL_TRACES === 'console' || process.env.OTEL_METRICS === 'console') {
  const { context, metrics, trace } = await import('@opentelemetry/api');
  const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  if (process.env.OTEL_TRACES === 'console') {
    const { BasicTracerProvider, ConsoleSpanExporter, SimpleSpanProcessor } = await import('@opentelemetry/sdk-trace-base');
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(new ConsoleSpanExporter())] }));
  }
  if (process.env.OTEL_METRICS === 'console') {
    const { ConsoleMetricExporter, MeterProvider, PeriodicExportingMetricReader } = await import('@opentelemetry/sdk-metrics');
    const reader = new PeriodicExportingMetricReader({ exporter: new ConsoleMetricExporter(), exportIntervalMillis: 10_000 });
    metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
  }
}

export {};
