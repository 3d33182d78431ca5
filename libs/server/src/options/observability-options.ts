import { check } from './option-checks.js';
import { OptionSection } from './option-section.js';

/** Which calls `observability.logCalls` logs through Nest's `Logger`. */
export type RpcCallLogging = 'errors' | 'all' | 'none';

/**
 * Spans, metrics, events and logs per call (docs/observability.md). Tracing and metrics use
 * `@opentelemetry/api` (an optional peer): no-ops until the app registers an OpenTelemetry SDK.
 * Events need `@nestjs/event-emitter` (an optional peer) in the app.
 */
export interface JsonRpcObservabilityOptions {
  /** One span per call, named by its method. Default true. */
  tracing?: boolean;
  /** `rpc.server.call.duration` and the stream counters. Default true. */
  metrics?: boolean;
  /** `jsonrpc.call.succeeded|failed`, `jsonrpc.stream.*`, `jsonrpc.durable.*` through `EventEmitter2`. Default true. */
  events?: boolean;
  /**
   * `'errors'` (default): one line per failed call (method, code, request id, duration; -32603
   * with its stack); `'all'`: also one line per successful call; `'none'`: no call lines at all.
   */
  logCalls?: RpcCallLogging;
}

export interface ResolvedObservabilityOptions {
  readonly tracing: boolean;
  readonly metrics: boolean;
  readonly events: boolean;
  readonly logCalls: RpcCallLogging;
}

/** The `observability` section. */
export const observabilitySection = new OptionSection<JsonRpcObservabilityOptions, ResolvedObservabilityOptions>('observability', {
  tracing: { default: true, check: check.boolean, doc: 'one span per call, named by its method (a no-op without an OpenTelemetry SDK)' },
  metrics: { default: true, check: check.boolean, doc: '`rpc.server.call.duration` and the stream counters (a no-op without an OpenTelemetry SDK)' },
  events: { default: true, check: check.boolean, doc: '`jsonrpc.*` events (with `@nestjs/event-emitter`)' },
  logCalls: {
    default: 'errors',
    check: check.oneOf(['errors', 'all', 'none'] satisfies RpcCallLogging[]),
    doc: "`'errors'`: a line per failed call; `'all'`: per call; `'none'` ([observability](docs/observability.md#logs))",
  },
});
