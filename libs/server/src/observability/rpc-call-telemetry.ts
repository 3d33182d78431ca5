import type { Logger } from '@nestjs/common';
import type * as OtelApi from '@opentelemetry/api';
import { performance } from 'node:perf_hooks'; // the global `performance` is a getter, run on every read
import type { RpcErrorMapping, RpcExceptionMapper } from '../errors/rpc-exception-mapper.js';
import type { ResolvedObservabilityOptions } from '../options/observability-options.js';
import type { RpcCallObserver, RpcCallRunner } from '../pipeline/rpc-call-observer.js';
import type { RpcResolvedCall } from '../pipeline/rpc-resolved-call.js';
import { isPromiseLike, wrapStreamSource } from '../pipeline/stream-source.js';
import { otelGlobals, RpcCallMetrics } from './rpc-call-metrics.js';
import { RpcCallReports, type RpcEventSink } from './rpc-call-reports.js';
import { CallRecord, durableStreamId, RpcCallTracing, type DurableRunRecord, type OtelApiModule } from './rpc-call-tracing.js';
import type { RpcStreamEnding } from './rpc-events.js';
import { ObservedRows, type RowsObserver } from './rpc-observed-rows.js';


/**
 * The `RpcCallObserver` the pipeline runs each call through: when a call (or a stream) begins and
 * how it ends (docs/observability.md), handed to the spans (`rpc-call-tracing.ts`), the metrics (`rpc-call-metrics.ts`)
 * and the events and call logs (`rpc-call-reports.ts`); a stream's rows are watched by
 * `rpc-observed-rows.ts`. Built at bootstrap with what the app has (`@opentelemetry/api`, an
 * `EventEmitter2`). Never reads a params value.
 */
export class RpcCallTelemetry implements RpcCallObserver, RowsObserver {
  private readonly tracing: RpcCallTracing;
  private readonly metrics: RpcCallMetrics;
  private readonly reports: RpcCallReports;

  constructor(
    private readonly api: OtelApiModule | undefined,
    private readonly options: ResolvedObservabilityOptions,
    private readonly mapper: RpcExceptionMapper,
    events: RpcEventSink | undefined,
    logger: Logger,
  ) {
    this.tracing = new RpcCallTracing(api, options.tracing);
    this.metrics = new RpcCallMetrics(api, options.metrics);
    this.reports = new RpcCallReports(events, logger, options.logCalls);
  }

  observe(call: RpcResolvedCall, run: RpcCallRunner): unknown {
    if (this.reports.reportsSuccess || call.definition.stream || this.sdkRegistered()) return this.observeFully(call, run);
    if (!this.reports.logsErrors) return run(call);
    // Nothing records a success (no SDK, no events, logCalls 'errors'): only a failure is logged,
    // so a plain call pays a clock read — a batch of 20 lost ~12 % of its rate to the full path.
    const start = performance.now();
    let result: unknown;
    try {
      result = run(call);
    } catch (error) {
      this.failed(new CallRecord(call, start, undefined, undefined), error);
      throw error;
    }
    if (!isPromiseLike(result)) return result;
    return result.then(undefined, (error: unknown) => {
      this.failed(new CallRecord(call, start, undefined, undefined), error);
      throw error;
    });
  }

  /**
   * Whether an SDK registered a tracer or meter provider with `@opentelemetry/api` (its global
   * registry entries; two property reads, so one registered later counts from the next call).
   */
  private sdkRegistered(): boolean {
    if (this.api === undefined) return false;
    const registry = otelGlobals();
    return registry !== undefined && ((this.options.tracing && registry.trace !== undefined) || (this.options.metrics && registry.metrics !== undefined));
  }

  private observeFully(call: RpcResolvedCall, run: RpcCallRunner): unknown {
    const record = this.tracing.begin(call);
    let result: unknown;
    try {
      result = this.tracing.run(record, run);
    } catch (error) {
      this.failed(record, error);
      throw error;
    }
    if (isPromiseLike(result)) {
      return result.then(
        (value) => this.succeeded(record, value),
        (error: unknown) => {
          this.failed(record, error);
          throw error;
        },
      );
    }
    return this.succeeded(record, result);
  }

  private succeeded(record: CallRecord, value: unknown): unknown {
    const durationMs = performance.now() - record.start;
    const { call } = record;
    this.reports.succeeded(call, durationMs);
    const streamId = durableStreamId(call.ctx);
    // A live stream is one call until its end; a durable start is a call that ends here, its run has its own span.
    if (call.definition.stream && streamId === undefined) return wrapStreamSource(value, (source) => new ObservedRows(source, record, undefined, this));
    record.span?.end();
    this.metrics.duration(record.method, undefined, durationMs);
    if (streamId !== undefined) return wrapStreamSource(value, (source) => new ObservedRows(source, record, streamId, this));
    return value;
  }

  private failed(record: CallRecord, thrown: unknown): void {
    const durationMs = performance.now() - record.start;
    const mapping = this.mappingOf(thrown, record.method);
    this.tracing.end(record.span, mapping.error);
    this.metrics.duration(record.method, mapping.error.code, durationMs);
    this.reports.failed(record.call, mapping, thrown, durationMs);
  }

  /**
   * What the transport answers with, logging nothing: the transport maps the same thrown value
   * when it answers and logs a -32603's cause there (`RpcExceptionMapper.toErrorObject`).
   */
  private mappingOf(thrown: unknown, method: string): RpcErrorMapping {
    return this.mapper.mapError(thrown, method);
  }

  // RowsObserver: what `ObservedRows` reports.

  streamUnusable(record: CallRecord, thrown: unknown): void {
    const mapping = this.mappingOf(thrown, record.method);
    if (record.call.ctx.transport === 'durable') return;
    this.tracing.end(record.span, mapping.error);
    this.metrics.duration(record.method, mapping.error.code, performance.now() - record.start);
    this.reports.streamUnusable(record.call, mapping);
  }

  streamStarted(record: CallRecord, run: DurableRunRecord | undefined): void {
    this.metrics.streamStarted(record.method, run !== undefined);
    this.reports.streamStarted(record.call, run?.streamId);
  }

  /** The client left before the first row was pulled: the call ends, no stream started. */
  streamAbandoned(record: CallRecord): void {
    this.tracing.end(record.span, undefined, { 'jsonrpc.stream.rows': 0, 'jsonrpc.stream.ending': 'client_gone' });
    this.metrics.duration(record.method, undefined, performance.now() - record.start);
  }

  rowCounter(record: CallRecord): (() => void) | undefined {
    return this.metrics.rowCounter(record.method);
  }

  /** A stream ended: its span, its duration (a live stream is one call to its end), event, log. */
  streamEnded(record: CallRecord, run: DurableRunRecord | undefined, rows: number, ending: RpcStreamEnding, thrown?: unknown): void {
    const failure = ending === 'error' ? this.mappingOf(thrown, record.method) : undefined;
    const durationMs = performance.now() - (run?.start ?? record.start);
    const spanAttributes = { 'jsonrpc.stream.rows': rows, 'jsonrpc.stream.ending': ending };
    if (run) {
      this.tracing.end(run.span, failure?.error, spanAttributes);
    } else {
      this.tracing.end(record.span, failure?.error, spanAttributes);
      this.metrics.duration(record.method, failure?.error.code, durationMs);
    }
    this.metrics.streamEnded(record.method, run !== undefined, ending);
    this.reports.streamEnded(record.call, run?.streamId, { rows, ending, durationMs, failure, thrown });
  }

  durableRun(record: CallRecord, streamId: string): DurableRunRecord {
    return this.tracing.durableRun(record, streamId);
  }

  within<T>(context: OtelApi.Context | undefined, pull: () => T): T {
    return this.tracing.within(context, pull);
  }
}
