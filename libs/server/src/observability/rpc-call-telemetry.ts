import type { Logger } from '@nestjs/common';
import type * as OtelApi from '@opentelemetry/api';
import { RpcErrorCode, type RpcErrorObject } from '@nest-jsonrpc/protocol';
import type { RpcHttpExchange } from '../context/rpc-context.js';
import { DurableRpcContext } from '../durable/durable-rpc-context.js';
import type { RpcExceptionMapper } from '../errors/rpc-exception-mapper.js';
import type { ResolvedObservabilityOptions } from '../options/observability-options.js';
import type { RpcCallObserver, RpcCallRunner } from '../pipeline/rpc-call-observer.js';
import type { RpcResolvedCall } from '../pipeline/rpc-pipeline.js';
import { isPromiseLike, RowSource, rowIteratorOf, StreamSourceBox, unboxStreamSource, type RowIterator } from '../pipeline/stream-source.js';
import { INSTRUMENTATION_SCOPE, JsonRpcEvent, type RpcCallEventBase, type RpcStreamEnding } from './rpc-events.js';
import { parseTraceparent } from './traceparent.js';

type Api = typeof OtelApi;
type Span = OtelApi.Span;
type Context = OtelApi.Context;
type Attributes = OtelApi.Attributes;

/** Where `@opentelemetry/api` 1.x keeps its registered providers (`registerGlobal`). */
const OTEL_API_REGISTRY = Symbol.for('opentelemetry.js.api.1');

/** What `EventEmitter2` offers that we use (the app's emitter, found at bootstrap). */
export interface RpcEventSink {
  emit(event: string, payload: unknown): unknown;
}

const SYSTEM = 'jsonrpc';

interface Instruments {
  readonly duration: OtelApi.Histogram;
  readonly rows: OtelApi.Counter;
  readonly durableStarted: OtelApi.Counter;
  readonly durableFinished: OtelApi.Counter;
  readonly liveStreams: OtelApi.UpDownCounter;
}

/** One call being observed: when it began, its span (if recorded), the context it runs in. */
class CallRecord {
  constructor(
    readonly call: RpcResolvedCall,
    readonly start: number,
    readonly span: Span | undefined,
    readonly context: Context | undefined,
  ) {}

  get method(): string {
    return this.call.ctx.method;
  }
}

/**
 * Spans, metrics, events and call logs for every call (issue 13): the `RpcCallObserver` the
 * pipeline runs each call through. Built at bootstrap with what the app has (`@opentelemetry/api`,
 * an `EventEmitter2`); the tracer and the meter are taken at the first call, so an SDK the app
 * registers after importing this module is still used. Never reads a params value.
 */
export class RpcCallTelemetry implements RpcCallObserver {
  private tracerRef: OtelApi.Tracer | undefined;
  private instrumentsRef: Instruments | undefined;
  /** The span this module opened for an HTTP request nothing else instrumented (batch items share it). */
  private readonly requestContexts = new WeakMap<RpcHttpExchange, Context>();
  /** Metric attributes per method (success) and per method and code (failure): one series each, built once. */
  private readonly metricAttributes = new Map<string, Attributes>();
  private readonly logAll: boolean;
  private readonly logErrors: boolean;
  /** What `trace.getTracerProvider()` delegates to while no SDK is registered. */
  private readonly noopTracerProvider: OtelApi.TracerProvider | undefined;

  constructor(
    private readonly api: Api | undefined,
    private readonly options: ResolvedObservabilityOptions,
    private readonly mapper: RpcExceptionMapper,
    private readonly events: RpcEventSink | undefined,
    private readonly logger: Logger,
  ) {
    this.logAll = options.logCalls === 'all';
    this.logErrors = options.logCalls !== 'none';
    this.noopTracerProvider = api ? new api.ProxyTracerProvider().getDelegate() : undefined;
  }

  /**
   * Whether an SDK's tracer provider is registered, checked per call (a property read or two):
   * without one a span would be a no-op, so none is started — and one registered later is
   * picked up at the next call.
   */
  private tracingLive(api: Api): boolean {
    const provider = api.trace.getTracerProvider() as OtelApi.TracerProvider & { getDelegate?(): OtelApi.TracerProvider };
    return (typeof provider.getDelegate === 'function' ? provider.getDelegate() : provider) !== this.noopTracerProvider;
  }

  observe(call: RpcResolvedCall, run: RpcCallRunner): unknown {
    if (this.events !== undefined || this.logAll || call.definition.stream || this.sdkRegistered()) return this.observeFully(call, run);
    if (!this.logErrors) return run(call);
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
    const registry = (globalThis as Record<symbol, { trace?: unknown; metrics?: unknown } | undefined>)[OTEL_API_REGISTRY];
    return registry !== undefined && ((this.options.tracing && registry.trace !== undefined) || (this.options.metrics && registry.metrics !== undefined));
  }

  private observeFully(call: RpcResolvedCall, run: RpcCallRunner): unknown {
    const record = this.begin(call);
    let result: unknown;
    try {
      result = record.context === undefined ? run(call) : this.api!.context.with(record.context, run, undefined, call);
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

  // ---- tracing ------------------------------------------------------------------------------------

  private get tracer(): OtelApi.Tracer {
    return (this.tracerRef ??= this.api!.trace.getTracer(INSTRUMENTATION_SCOPE));
  }

  private begin(call: RpcResolvedCall): CallRecord {
    const start = performance.now();
    const api = this.api;
    if (api === undefined || !this.options.tracing || !this.tracingLive(api)) return new CallRecord(call, start, undefined, undefined);
    const { ctx } = call;
    const parent = this.parentOf(api, ctx.exchange);
    const attributes: Attributes = { 'rpc.system.name': SYSTEM, 'rpc.method': ctx.method, 'jsonrpc.protocol.version': '2.0' };
    if (!ctx.isNotification && ctx.id !== undefined) attributes['jsonrpc.request.id'] = String(ctx.id);
    if (ctx instanceof DurableRpcContext) attributes['jsonrpc.durable.stream_id'] = ctx.streamId;
    const span = this.tracer.startSpan(ctx.method, { kind: api.SpanKind.SERVER, attributes }, parent);
    // No SDK (or nothing to propagate): nothing to make active, nothing to end.
    if (!span.isRecording() && !api.isSpanContextValid(span.spanContext())) return new CallRecord(call, start, undefined, undefined);
    return new CallRecord(call, start, span, api.trace.setSpan(parent, span));
  }

  /**
   * The active context when it has a span (the app's HTTP instrumentation, or the call this one
   * runs inside). Else the request's incoming trace (`traceparent`): a single call's span is then
   * the request's server span, and a batch gets one span for the HTTP request, its items' parent.
   */
  private parentOf(api: Api, exchange: RpcHttpExchange): Context {
    const active = api.context.active();
    if (api.trace.getSpan(active) !== undefined) return active;
    if (!isBatchBody(exchange.request.body)) return this.remoteParent(api, exchange.request.headers);
    return this.requestContext(api, exchange) ?? active;
  }

  private requestContext(api: Api, exchange: RpcHttpExchange): Context | undefined {
    const known = this.requestContexts.get(exchange);
    if (known !== undefined) return known;
    const { request } = exchange;
    const parent = this.remoteParent(api, request.headers);
    const route = request.routeOptions?.url ?? request.url;
    const span = this.tracer.startSpan(
      `${request.method} ${route}`,
      { kind: api.SpanKind.SERVER, attributes: { 'http.request.method': request.method, 'http.route': route, 'url.path': route } },
      parent,
    );
    const recording = span.isRecording();
    if (!recording && !api.isSpanContextValid(span.spanContext())) return undefined;
    const context = api.trace.setSpan(parent, span);
    this.requestContexts.set(exchange, context);
    if (recording) {
      const res = exchange.reply.raw;
      const end = () => {
        span.setAttribute('http.response.status_code', res.statusCode);
        span.end();
      };
      if (res.destroyed || res.writableFinished) queueMicrotask(end);
      else res.once('close', end);
    }
    return context;
  }

  /** The incoming trace: the app's registered propagator first, else the `traceparent` header. */
  private remoteParent(api: Api, headers: Record<string, string | string[] | undefined>): Context {
    const root = api.ROOT_CONTEXT;
    const extracted = api.propagation.extract(root, headers);
    if (api.trace.getSpanContext(extracted) !== undefined) return extracted;
    const parsed = parseTraceparent(headers.traceparent);
    if (parsed === undefined) return root;
    return api.trace.setSpanContext(root, { ...parsed, isRemote: true });
  }

  // ---- outcomes -----------------------------------------------------------------------------------

  private succeeded(record: CallRecord, value: unknown): unknown {
    const durationMs = performance.now() - record.start;
    const { call } = record;
    if (this.events) this.emit(JsonRpcEvent.CallSucceeded, { ...this.eventBase(call), durationMs });
    if (this.logAll) this.logger.log(`call succeeded ${this.logFields(call)} durationMs=${round(durationMs)}`);
    const durable = call.ctx instanceof DurableRpcContext;
    // A live stream is one call until its end; a durable start is a call that ends here, its run has its own span.
    if (call.definition.stream && !durable) return new StreamSourceBox(new ObservedRows(unboxStreamSource(value), record, undefined, this));
    record.span?.end();
    this.recordDuration(record, undefined, durationMs);
    if (durable) return new StreamSourceBox(new ObservedRows(unboxStreamSource(value), record, (call.ctx as DurableRpcContext).streamId, this));
    return value;
  }

  /** The handler's value is no stream (a programming error, answered -32603 before any row). */
  streamUnusable(record: CallRecord, thrown: unknown): void {
    const error = this.errorOf(thrown, record.method);
    if (record.call.ctx instanceof DurableRpcContext) return;
    this.endSpan(record.span, error);
    this.recordDuration(record, error);
    if (this.logErrors) this.logFailure(`stream unusable ${this.logFields(record.call)} code=${error.code}`, error);
  }

  private failed(record: CallRecord, thrown: unknown): void {
    const durationMs = performance.now() - record.start;
    const { call } = record;
    const error = this.errorOf(thrown, record.method);
    this.endSpan(record.span, error);
    this.recordDuration(record, error, durationMs);
    if (this.events) {
      const cause = error.code === RpcErrorCode.InternalError ? { cause: thrown } : undefined;
      this.emit(JsonRpcEvent.CallFailed, { ...this.eventBase(call), durationMs, code: error.code, message: error.message, ...cause });
    }
    if (this.logErrors) this.logFailure(`call failed ${this.logFields(call)} code=${error.code} durationMs=${round(durationMs)}`, error);
  }

  /**
   * The error object the transport answers with. Mapped without logging: the transport maps the
   * same thrown value next and logs a -32603's cause there, as it always did (once).
   */
  errorOf(thrown: unknown, method: string): RpcErrorObject {
    return this.mapper.toErrorObjectUnlogged(thrown, method);
  }

  private endSpan(span: Span | undefined, error: RpcErrorObject | undefined, attributes?: Attributes): void {
    if (span === undefined) return;
    if (attributes) span.setAttributes(attributes);
    if (error !== undefined) {
      const code = String(error.code);
      span.setAttributes({ 'rpc.status_code': code, 'error.type': code });
      span.setStatus({ code: this.api!.SpanStatusCode.ERROR });
    }
    span.end();
  }

  // ---- streams ------------------------------------------------------------------------------------

  /** A live stream's rows are about to flow, or a durable stream's producer begins. */
  streamStarted(record: CallRecord, run: DurableRunRecord | undefined): void {
    const instruments = this.instruments;
    if (run) {
      instruments?.durableStarted.add(1, this.attributesOf(record.method, undefined));
      if (this.events) this.emit(JsonRpcEvent.DurableStarted, { ...this.eventBase(record.call), streamId: run.streamId });
      return;
    }
    instruments?.liveStreams.add(1, this.attributesOf(record.method, undefined));
    if (this.events) this.emit(JsonRpcEvent.StreamStarted, this.eventBase(record.call));
  }

  /** The client left before the first row was pulled: the call ends, no stream started. */
  streamAbandoned(record: CallRecord): void {
    this.endSpan(record.span, undefined, { 'jsonrpc.stream.rows': 0, 'jsonrpc.stream.ending': 'client_gone' });
    this.recordDuration(record, undefined);
  }

  streamRow(record: CallRecord): void {
    this.instruments?.rows.add(1, this.attributesOf(record.method, undefined));
  }

  /** A stream ended: its span, its duration (a live stream is one call to its end), event, log. */
  streamEnded(record: CallRecord, run: DurableRunRecord | undefined, rows: number, ending: RpcStreamEnding, thrown?: unknown): void {
    const error = ending === 'error' ? this.errorOf(thrown, record.method) : undefined;
    const durationMs = performance.now() - (run?.start ?? record.start);
    const spanAttributes: Attributes = { 'jsonrpc.stream.rows': rows, 'jsonrpc.stream.ending': ending };
    const instruments = this.instruments;
    const attributes = this.attributesOf(record.method, undefined);
    if (run) {
      this.endSpan(run.span, error, spanAttributes);
      instruments?.durableFinished.add(1, { ...attributes, 'jsonrpc.stream.ending': ending });
    } else {
      this.endSpan(record.span, error, spanAttributes);
      this.recordDuration(record, error);
      instruments?.liveStreams.add(-1, attributes);
    }
    if (this.events) {
      const base = run ? { ...this.eventBase(record.call), streamId: run.streamId } : this.eventBase(record.call);
      const failure = error ? { code: error.code, ...(error.code === RpcErrorCode.InternalError ? { cause: thrown } : undefined) } : undefined;
      this.emit(run ? JsonRpcEvent.DurableFinished : JsonRpcEvent.StreamFinished, { ...base, durationMs, rows, ending, ...failure });
    }
    const line = `${run ? 'durable stream' : 'stream'} ${ending} ${this.logFields(record.call)}${run ? ` streamId=${run.streamId}` : ''} rows=${rows}`;
    if (error) {
      if (this.logErrors) this.logFailure(`${line} code=${error.code} durationMs=${round(durationMs)}`, error);
    } else if (this.logAll) this.logger.log(`${line} durationMs=${round(durationMs)}`);
  }

  /** A durable run: its own span (a new trace) linked to the call that started it. */
  durableRun(record: CallRecord, streamId: string): DurableRunRecord {
    const start = performance.now();
    const api = this.api;
    if (api === undefined || !this.options.tracing) return { streamId, start, span: undefined, context: undefined };
    const links = record.span ? [{ context: record.span.spanContext() }] : [];
    const span = this.tracer.startSpan(
      record.method,
      {
        kind: api.SpanKind.INTERNAL,
        root: true,
        links,
        attributes: { 'rpc.system.name': SYSTEM, 'rpc.method': record.method, 'jsonrpc.durable.stream_id': streamId },
      },
      api.ROOT_CONTEXT,
    );
    if (!span.isRecording()) return { streamId, start, span: undefined, context: undefined };
    return { streamId, start, span, context: api.trace.setSpan(api.ROOT_CONTEXT, span) };
  }

  /** Runs `pull` with `context` active (rows are produced inside the stream's span). */
  within<T>(context: Context | undefined, pull: () => T): T {
    return context === undefined ? pull() : this.api!.context.with(context, pull);
  }

  // ---- metrics ------------------------------------------------------------------------------------

  private get instruments(): Instruments | undefined {
    if (this.instrumentsRef !== undefined) return this.instrumentsRef;
    const api = this.api;
    if (api === undefined || !this.options.metrics) return undefined;
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

  private recordDuration(record: CallRecord, error: RpcErrorObject | undefined, durationMs = performance.now() - record.start): void {
    this.instruments?.duration.record(durationMs / 1000, this.attributesOf(record.method, error?.code));
  }

  /** `rpc.method`, `rpc.system.name` and on error `rpc.status_code`: never a per-request value. */
  private attributesOf(method: string, code: number | undefined): Attributes {
    const key = code === undefined ? method : `${method}\u0000${code}`;
    let attributes = this.metricAttributes.get(key);
    if (attributes === undefined) {
      attributes = Object.freeze(
        code === undefined
          ? { 'rpc.system.name': SYSTEM, 'rpc.method': method }
          : { 'rpc.system.name': SYSTEM, 'rpc.method': method, 'rpc.status_code': String(code) },
      );
      this.metricAttributes.set(key, attributes);
    }
    return attributes;
  }

  // ---- events and logs ----------------------------------------------------------------------------

  private eventBase(call: RpcResolvedCall): RpcCallEventBase {
    const { ctx } = call;
    return { method: ctx.method, transport: ctx.transport, id: ctx.id, isNotification: ctx.isNotification, requestId: ctx.exchange.requestId };
  }

  /** A listener's failure is logged and changes nothing for the call. */
  private emit(event: string, payload: object): void {
    try {
      const result = this.events!.emit(event, payload);
      if (isPromiseLike(result)) result.then(undefined, (error: unknown) => this.listenerFailed(event, error));
    } catch (error) {
      this.listenerFailed(event, error);
    }
  }

  private listenerFailed(event: string, error: unknown): void {
    this.logger.error(`A listener of ${event} failed: ${error instanceof Error ? error.message : String(error)}`, error instanceof Error ? error.stack : undefined);
  }

  private logFields(call: RpcResolvedCall): string {
    const { ctx } = call;
    const id = ctx.isNotification ? '' : ` id=${JSON.stringify(ctx.id ?? null)}`;
    return `method=${ctx.method}${id} transport=${ctx.transport} requestId=${ctx.exchange.requestId}`;
  }

  /**
   * One line per failure, at the `log` level: the server did its job (a client error, a refusal,
   * an error the app chose). A -32603 is logged by the exception mapper when the transport maps
   * it, as before (`Unhandled error in <method>: ...`, error level, with the stack): that line is
   * the call's, not a second one.
   */
  private logFailure(line: string, error: RpcErrorObject): void {
    if (error.code !== RpcErrorCode.InternalError) this.logger.log(line);
  }
}

/** A durable stream's producer, observed: its own span and start time. */
interface DurableRunRecord {
  readonly streamId: string;
  readonly start: number;
  readonly span: Span | undefined;
  readonly context: Context | undefined;
}

/**
 * A stream method's rows, observed: counted, pulled inside the call's span (a durable run: inside
 * its own span), and watched for how they end — exhausted, failing (an error frame), or stopped
 * early (the client left, the stream was cancelled).
 */
class ObservedRows extends RowSource {
  constructor(
    private readonly source: unknown,
    private readonly record: CallRecord,
    /** The durable stream these rows feed (undefined: a live stream). */
    private readonly streamId: string | undefined,
    private readonly telemetry: RpcCallTelemetry,
  ) {
    super();
  }

  rowIterator(): RowIterator {
    const { record, telemetry } = this;
    let inner: RowIterator;
    try {
      inner = rowIteratorOf(this.source);
    } catch (error) {
      telemetry.streamUnusable(record, error);
      throw error;
    }
    return new ObservedRowIterator(inner, record, this.streamId, telemetry);
  }
}

class ObservedRowIterator implements RowIterator {
  private rows = 0;
  private started = false;
  private ended = false;
  private run: DurableRunRecord | undefined;
  private context: Context | undefined;

  constructor(
    private readonly inner: RowIterator,
    private readonly record: CallRecord,
    private readonly streamId: string | undefined,
    private readonly telemetry: RpcCallTelemetry,
  ) {
    this.context = record.context;
    this.onStep = this.onStep.bind(this);
    this.onError = this.onError.bind(this);
  }

  next(): IteratorResult<unknown> | Promise<IteratorResult<unknown>> {
    if (this.ended) return this.inner.next();
    if (!this.started) {
      this.started = true;
      if (this.streamId !== undefined) {
        this.run = this.telemetry.durableRun(this.record, this.streamId);
        this.context = this.run.context;
      }
      this.telemetry.streamStarted(this.record, this.run);
    }
    let step: IteratorResult<unknown> | Promise<IteratorResult<unknown>>;
    try {
      step = this.telemetry.within(this.context, () => this.inner.next());
    } catch (error) {
      return this.onError(error);
    }
    return isPromiseLike(step) ? (step as Promise<IteratorResult<unknown>>).then(this.onStep, this.onError) : this.onStep(step);
  }

  return(): unknown {
    // Stopped before its end: the client left (live), or the stream was cancelled or interrupted (durable).
    // A durable start refused after the handler ran (the running limit) never started: nothing to report.
    if (!this.ended) {
      if (this.started) this.end(this.run ? 'cancelled' : 'client_gone');
      else if (this.streamId === undefined) this.telemetry.streamAbandoned(this.record);
    }
    this.ended = true;
    return this.inner.return?.();
  }

  private onStep(step: IteratorResult<unknown>): IteratorResult<unknown> {
    if (this.ended) return step;
    if (step.done) this.end('completed');
    else {
      this.rows++;
      this.telemetry.streamRow(this.record);
    }
    return step;
  }

  private onError(error: unknown): never {
    if (!this.ended) this.end('error', error);
    throw error;
  }

  private end(ending: RpcStreamEnding, thrown?: unknown): void {
    this.ended = true;
    this.telemetry.streamEnded(this.record, this.run, this.rows, ending, thrown);
  }
}

/** A batch body starts with `[` (the body is still the raw text our body parser kept). */
function isBatchBody(body: unknown): boolean {
  if (typeof body !== 'string') return false;
  for (let i = 0; i < body.length; i++) {
    const c = body.charCodeAt(i);
    // JSON whitespace: space, tab, line feed, carriage return.
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return c === 0x5b;
  }
  return false;
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
