/**
 * The OpenTelemetry SDK as an app would register it, with in-memory exporters: spans kept in
 * `spans`, metrics collected on demand. Registered globally (tracer provider, meter provider,
 * AsyncLocalStorage context manager); `uninstall()` puts the API back to its no-op state.
 */
import { context, metrics, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { AggregationTemporality, MeterProvider, MetricReader, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';

class OnDemandReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

export interface TestSdk {
  readonly exporter: InMemorySpanExporter;
  spans(): ReadableSpan[];
  collect(): Promise<ResourceMetrics>;
  uninstall(): Promise<void>;
}

export function installTestSdk(): TestSdk {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const reader = new OnDemandReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  trace.setGlobalTracerProvider(tracerProvider);
  metrics.setGlobalMeterProvider(meterProvider);
  return {
    exporter,
    spans: () => exporter.getFinishedSpans(),
    async collect() {
      const { resourceMetrics } = await reader.collect();
      return resourceMetrics;
    },
    async uninstall() {
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
      contextManager.disable();
      trace.disable();
      metrics.disable();
      context.disable();
      propagation.disable();
    },
  };
}

/** Every data point of one metric, with its attributes. */
export function pointsOf(resourceMetrics: ResourceMetrics, name: string): Array<{ attributes: Record<string, unknown>; value: any }> {
  const out: Array<{ attributes: Record<string, unknown>; value: any }> = [];
  for (const scope of resourceMetrics.scopeMetrics) {
    for (const metric of scope.metrics) {
      if (metric.descriptor.name !== name) continue;
      for (const point of metric.dataPoints as Array<{ attributes: Record<string, unknown>; value: unknown }>) out.push({ attributes: point.attributes, value: point.value });
    }
  }
  return out;
}

/** Resolves when `predicate` holds (polled each tick), or rejects after `timeoutMs`. */
export async function until(predicate: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
