/**
 * The W3C `traceparent` header (https://www.w3.org/TR/trace-context/#traceparent-header), for an
 * app that registered no propagator. Hand-written (a dozen lines) because the W3C propagator
 * lives in `@opentelemetry/core`, an SDK package this library does not depend on.
 */
export interface ParsedTraceparent {
  readonly traceId: string;
  readonly spanId: string;
  readonly traceFlags: number;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);

/** The parent a `traceparent` header names, or undefined when the header is absent or malformed. */
export function parseTraceparent(header: unknown): ParsedTraceparent | undefined {
  if (typeof header !== 'string') return undefined;
  const match = TRACEPARENT.exec(header.trim());
  if (!match) return undefined;
  const [, version, traceId, spanId, flags, rest] = match;
  // Version ff is invalid; version 00 has exactly four fields; later versions may add fields.
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return undefined;
  return { traceId, spanId, traceFlags: parseInt(flags, 16) & 1 };
}

/** `traceparent` for a span context (version 00). */
export function formatTraceparent(traceId: string, spanId: string, traceFlags: number): string {
  return `00-${traceId}-${spanId}-${(traceFlags & 1) === 1 ? '01' : '00'}`;
}
