import type * as OtelApi from '@opentelemetry/api';
import { performance } from 'node:perf_hooks'; // the global `performance` is a getter, run on every read
import type { RpcErrorObject } from '@nest-jsonrpc/protocol';
import type { RpcContext, RpcHttpExchange } from '../context/rpc-context.js';
import type { DurableRpcContext } from '../durable/durable-rpc-context.js';
import type { RpcCallRunner } from '../pipeline/rpc-call-observer.js';
import type { RpcResolvedCall } from '../pipeline/rpc-resolved-call.js';
import { INSTRUMENTATION_SCOPE } from './rpc-events.js';
import { parseTraceparent } from './traceparent.js';

/** `@opentelemetry/api`, when the app has it (an optional peer, loaded at bootstrap). */
export type OtelApiModule = typeof OtelApi;
type Span = OtelApi.Span;
type Context = OtelApi.Context;
type Attributes = OtelApi.Attributes;

/** `rpc.system.name` of every span and metric. */
export const RPC_SYSTEM = 'jsonrpc';

/** One call being observed: when it began, its span (if recorded), the context it runs in. */
export class CallRecord {
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

/** A durable stream's producer, observed: its own span and start time. */
export interface DurableRunRecord {
  readonly streamId: string;
  readonly start: number;
  readonly span: Span | undefined;
  readonly context: Context | undefined;
}

/** The durable stream a call's producer feeds, read from its transport (a durable run's context carries the id). */
export function durableStreamId(ctx: RpcContext): string | undefined {
  return ctx.transport === 'durable' ? (ctx as DurableRpcContext).streamId : undefined;
}

/**
 * The spans of calls: one SERVER span per call, named by the method, under the incoming trace
 * (the active span, the app's propagator, or the W3C `traceparent` header); one span for a batch's
 * HTTP request when nothing else instrumented it (its items' parent); a durable run's own span,
 * linked to the call that started it. The tracer is taken at the first span, so an SDK the app
 * registers after importing this module is still used.
 */
export class RpcCallTracing {
  private tracerRef: OtelApi.Tracer | undefined;
  /** The span this module opened for an HTTP request nothing else instrumented (batch items share it). */
  private readonly requestContexts = new WeakMap<RpcHttpExchange, Context>();
  /** What `trace.getTracerProvider()` delegates to while no SDK is registered. */
  private readonly noopTracerProvider: OtelApi.TracerProvider | undefined;

  constructor(
    private readonly api: OtelApiModule | undefined,
    private readonly enabled: boolean,
  ) {
    this.noopTracerProvider = api ? new api.ProxyTracerProvider().getDelegate() : undefined;
  }

  /** A call begins: its record, with a span when an SDK records (or propagates) one. */
  begin(call: RpcResolvedCall): CallRecord {
    const start = performance.now();
    const api = this.api;
    if (api === undefined || !this.enabled || !this.tracingLive(api)) return new CallRecord(call, start, undefined, undefined);
    const { ctx } = call;
    const parent = this.parentOf(api, ctx.exchange);
    const attributes: Attributes = { 'rpc.system.name': RPC_SYSTEM, 'rpc.method': ctx.method, 'jsonrpc.protocol.version': '2.0' };
    if (!ctx.isNotification && ctx.id !== undefined) attributes['jsonrpc.request.id'] = String(ctx.id);
    const streamId = durableStreamId(ctx);
    if (streamId !== undefined) attributes['jsonrpc.durable.stream_id'] = streamId;
    const span = this.tracer.startSpan(ctx.method, { kind: api.SpanKind.SERVER, attributes }, parent);
    // No SDK (or nothing to propagate): nothing to make active, nothing to end.
    if (!span.isRecording() && !api.isSpanContextValid(span.spanContext())) return new CallRecord(call, start, undefined, undefined);
    return new CallRecord(call, start, span, api.trace.setSpan(parent, span));
  }

  /** A durable run: its own span (a new trace) linked to the call that started it. */
  durableRun(record: CallRecord, streamId: string): DurableRunRecord {
    const start = performance.now();
    const api = this.api;
    if (api === undefined || !this.enabled) return { streamId, start, span: undefined, context: undefined };
    const links = record.span ? [{ context: record.span.spanContext() }] : [];
    const span = this.tracer.startSpan(
      record.method,
      {
        kind: api.SpanKind.INTERNAL,
        root: true,
        links,
        attributes: { 'rpc.system.name': RPC_SYSTEM, 'rpc.method': record.method, 'jsonrpc.durable.stream_id': streamId },
      },
      api.ROOT_CONTEXT,
    );
    if (!span.isRecording()) return { streamId, start, span: undefined, context: undefined };
    return { streamId, start, span, context: api.trace.setSpan(api.ROOT_CONTEXT, span) };
  }

  /** Ends a span: on an error, its code as `rpc.status_code` and `error.type`, status ERROR. */
  end(span: Span | undefined, error: RpcErrorObject | undefined, attributes?: Attributes): void {
    if (span === undefined) return;
    if (attributes) span.setAttributes(attributes);
    if (error !== undefined) {
      const code = String(error.code);
      span.setAttributes({ 'rpc.status_code': code, 'error.type': code });
      span.setStatus({ code: this.api!.SpanStatusCode.ERROR });
    }
    span.end();
  }

  /** Runs the call with its span active (the handler's own spans are its children). */
  run(record: CallRecord, run: RpcCallRunner): unknown {
    return record.context === undefined ? run(record.call) : this.api!.context.with(record.context, run, undefined, record.call);
  }

  /** Runs `pull` with `context` active (rows are produced inside the stream's span). */
  within<T>(context: Context | undefined, pull: () => T): T {
    return context === undefined ? pull() : this.api!.context.with(context, pull);
  }

  private get tracer(): OtelApi.Tracer {
    return (this.tracerRef ??= this.api!.trace.getTracer(INSTRUMENTATION_SCOPE));
  }

  /**
   * Whether an SDK's tracer provider is registered, checked per call (a property read or two):
   * without one a span would be a no-op, so none is started — and one registered later is
   * picked up at the next call.
   */
  private tracingLive(api: OtelApiModule): boolean {
    const provider = api.trace.getTracerProvider() as OtelApi.TracerProvider & { getDelegate?(): OtelApi.TracerProvider };
    return (typeof provider.getDelegate === 'function' ? provider.getDelegate() : provider) !== this.noopTracerProvider;
  }

  /**
   * The active context when it has a span (the app's HTTP instrumentation, or the call this one
   * runs inside). Else the request's incoming trace (`traceparent`): a single call's span is then
   * the request's server span, and a batch gets one span for the HTTP request, its items' parent.
   */
  private parentOf(api: OtelApiModule, exchange: RpcHttpExchange): Context {
    const active = api.context.active();
    if (api.trace.getSpan(active) !== undefined) return active;
    if (!exchange.isBatch) return this.remoteParent(api, exchange.headers);
    return this.requestContext(api, exchange) ?? active;
  }

  private requestContext(api: OtelApiModule, exchange: RpcHttpExchange): Context | undefined {
    const known = this.requestContexts.get(exchange);
    if (known !== undefined) return known;
    const parent = this.remoteParent(api, exchange.headers);
    const { route, method } = exchange;
    const span = this.tracer.startSpan(
      `${method} ${route}`,
      { kind: api.SpanKind.SERVER, attributes: { 'http.request.method': method, 'http.route': route, 'url.path': route } },
      parent,
    );
    const recording = span.isRecording();
    if (!recording && !api.isSpanContextValid(span.spanContext())) return undefined;
    const context = api.trace.setSpan(parent, span);
    this.requestContexts.set(exchange, context);
    if (recording) {
      const res = exchange.res;
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
  private remoteParent(api: OtelApiModule, headers: Record<string, string | string[] | undefined>): Context {
    const root = api.ROOT_CONTEXT;
    const extracted = api.propagation.extract(root, headers);
    if (api.trace.getSpanContext(extracted) !== undefined) return extracted;
    const parsed = parseTraceparent(headers.traceparent);
    if (parsed === undefined) return root;
    return api.trace.setSpanContext(root, { ...parsed, isRemote: true });
  }
}
