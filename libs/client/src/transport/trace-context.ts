/**
 * `traceparent` for the active OpenTelemetry span, so a trace crosses client -> server — without
 * depending on `@opentelemetry/api`. The API keeps what an app registers (context manager,
 * propagator) on one global object whose key is part of its stable contract; reading it there
 * works in Node and browsers and needs no import a bundler would have to resolve. When the app
 * registered a propagator it writes the headers (also `tracestate`, baggage); else the
 * `traceparent` is built from the active span's context (W3C trace-context, version 00).
 */
const OTEL_API_GLOBAL = Symbol.for('opentelemetry.js.api.1');
const SPAN_KEY = Symbol.for('OpenTelemetry Context Key SPAN');
const INVALID_TRACE = /^0+$/;

interface OtelContext {
  getValue(key: symbol): unknown;
}

interface OtelGlobal {
  context?: { active?(): OtelContext | undefined };
  propagation?: { inject?(context: OtelContext, carrier: Headers, setter: { set(carrier: Headers, key: string, value: string): void }): void };
}

interface SpanContextLike {
  traceId: string;
  spanId: string;
  traceFlags: number;
}

const HEADERS_SETTER = {
  set(carrier: Headers, key: string, value: string): void {
    carrier.set(key, value);
  },
};

/** Adds `traceparent` (unless the caller set one) when an OpenTelemetry span is active. Never throws. */
export function addTraceContext(headers: Headers): void {
  if (headers.has('traceparent')) return;
  try {
    const api = (globalThis as Record<symbol, OtelGlobal | undefined>)[OTEL_API_GLOBAL];
    const active = api?.context?.active?.();
    if (!active) return;
    const span = active.getValue(SPAN_KEY) as { spanContext?(): SpanContextLike } | undefined;
    const spanContext = span?.spanContext?.();
    if (!spanContext || INVALID_TRACE.test(spanContext.traceId) || INVALID_TRACE.test(spanContext.spanId)) return;
    api!.propagation?.inject?.(active, headers, HEADERS_SETTER);
    if (headers.has('traceparent')) return;
    const flags = (spanContext.traceFlags & 1) === 1 ? '01' : '00';
    headers.set('traceparent', `00-${spanContext.traceId}-${spanContext.spanId}-${flags}`);
  } catch {
    // Tracing must never break a call.
  }
}
