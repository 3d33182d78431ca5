import type { OptionProblems } from './option-checks.js';

/** Which calls `observability.logCalls` logs through Nest's `Logger`. */
export type RpcCallLogging = 'errors' | 'all' | 'none';

/**
 * Spans, metrics, events and logs per call (DESIGN §3 `observability`). Tracing and metrics use
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

const OBSERVABILITY_KEYS = ['tracing', 'metrics', 'events', 'logCalls'];
const LOG_CALLS: readonly RpcCallLogging[] = ['errors', 'all', 'none'];

/** Fills the `observability` section's defaults; its problems are reported with the others. */
export function resolveObservabilityOptions(options: JsonRpcObservabilityOptions | undefined, problems: OptionProblems): ResolvedObservabilityOptions {
  const o: JsonRpcObservabilityOptions = problems.object('"observability"', options, OBSERVABILITY_KEYS, (key) => `unknown option "observability.${key}"`)
    ? (options ?? {})
    : {};
  problems.boolean('"observability.tracing"', o.tracing);
  problems.boolean('"observability.metrics"', o.metrics);
  problems.boolean('"observability.events"', o.events);
  problems.oneOf('"observability.logCalls"', o.logCalls ?? 'errors', LOG_CALLS);
  return {
    tracing: o.tracing ?? true,
    metrics: o.metrics ?? true,
    events: o.events ?? true,
    logCalls: o.logCalls ?? 'errors',
  };
}
