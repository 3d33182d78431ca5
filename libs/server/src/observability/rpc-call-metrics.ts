import type * as OtelApi from '@opentelemetry/api';
import { INSTRUMENTATION_SCOPE, type RpcStreamEnding } from './rpc-events.js';
import { RPC_SYSTEM, type OtelApiModule } from './rpc-call-tracing.js';

type Attributes = OtelApi.Attributes;

/** Where `@opentelemetry/api` 1.x keeps its registered providers (`registerGlobal`). */
const OTEL_API_REGISTRY = Symbol.for('opentelemetry.js.api.1');

/** The providers an SDK registered with `@opentelemetry/api` (two property reads; one registered later counts from the next read). */
export function otelGlobals(): { trace?: unknown; metrics?: unknown } | undefined {
  return (globalThis as Record<symbol, { trace?: unknown; metrics?: unknown } | undefined>)[OTEL_API_REGISTRY];
}

interface Instruments {
  readonly duration: OtelApi.Histogram;
  readonly rows: OtelApi.Counter;
  readonly durableStarted: OtelApi.Counter;
  readonly durableFinished: OtelApi.Counter;
  readonly liveStreams: OtelApi.UpDownCounter;
}

/**
 * The metric instruments of calls and streams and their attributes: `rpc.method`,
 * `rpc.system.name` and on error `rpc.status_code` — never a per-request value, so one series per
 * method (and code), each attribute set built once.
 */
export class RpcCallMetrics {
  private instrumentsRef: Instruments | undefined;
  /** Metric attributes per method (success) and per method and code (failure): one series each, built once. */
  private readonly attributes = new Map<string, Attributes>();

  constructor(
    private readonly api: OtelApiModule | undefined,
    private readonly enabled: boolean,
  ) {}

  /** `rpc.server.call.duration` (a stream: to its end), in seconds. */
  duration(method: string, code: number | undefined, durationMs: number): void {
    this.instruments?.duration.record(durationMs / 1000, this.attributesOf(method, code));
  }

  /** A live stream's rows are about to flow (`durable`: a durable stream's producer begins). */
  streamStarted(method: string, durable: boolean): void {
    const instruments = this.instruments;
    if (durable) instruments?.durableStarted.add(1, this.attributesOf(method, undefined));
    else instruments?.liveStreams.add(1, this.attributesOf(method, undefined));
  }

  /**
   * What counts one row of a stream of `method` that starts now (`jsonrpc.server.stream.rows`), or
   * undefined when no meter provider is registered: decided once per stream, so a row costs a
   * call, not a look at the API's registry.
   */
  rowCounter(method: string): (() => void) | undefined {
    const rows = this.instruments?.rows;
    if (rows === undefined) return undefined;
    const attributes = this.attributesOf(method, undefined);
    return () => rows.add(1, attributes);
  }

  streamEnded(method: string, durable: boolean, ending: RpcStreamEnding): void {
    const instruments = this.instruments;
    const attributes = this.attributesOf(method, undefined);
    if (durable) instruments?.durableFinished.add(1, { ...attributes, 'jsonrpc.stream.ending': ending });
    else instruments?.liveStreams.add(-1, attributes);
  }

  private get instruments(): Instruments | undefined {
    if (this.instrumentsRef !== undefined) return this.instrumentsRef;
    const api = this.api;
    if (api === undefined || !this.enabled) return undefined;
    // No meter provider registered: nothing records. Asking the API for its meter and comparing it
    // with a fresh no-op meter instead cost a registry lookup and an allocation each time.
    if (otelGlobals()?.metrics === undefined) return undefined;
    // Taken at the first call with a meter provider registered, not at import: `@opentelemetry/api`
    // has no proxy meter, so a meter taken before the app registers its SDK would stay a no-op.
    const meter = api.metrics.getMeter(INSTRUMENTATION_SCOPE);
    if (meter === api.createNoopMeter()) return undefined;
    return (this.instrumentsRef = {
      duration: meter.createHistogram('rpc.server.call.duration', { unit: 's', description: 'Duration of JSON-RPC calls (a stream: to its end)' }),
      rows: meter.createCounter('jsonrpc.server.stream.rows', { unit: '{row}', description: 'Rows produced by stream methods (live and durable)' }),
      durableStarted: meter.createCounter('jsonrpc.server.durable.started', { unit: '{stream}', description: 'Durable streams started' }),
      durableFinished: meter.createCounter('jsonrpc.server.durable.finished', { unit: '{stream}', description: 'Durable streams finished, by ending' }),
      liveStreams: meter.createUpDownCounter('jsonrpc.server.stream.active', { unit: '{stream}', description: 'Live streams being written' }),
    });
  }

  private attributesOf(method: string, code: number | undefined): Attributes {
    const key = code === undefined ? method : `${method}\u0000${code}`;
    let attributes = this.attributes.get(key);
    if (attributes === undefined) {
      attributes = Object.freeze(
        code === undefined
          ? { 'rpc.system.name': RPC_SYSTEM, 'rpc.method': method }
          : { 'rpc.system.name': RPC_SYSTEM, 'rpc.method': method, 'rpc.status_code': String(code) },
      );
      this.attributes.set(key, attributes);
    }
    return attributes;
  }
}
