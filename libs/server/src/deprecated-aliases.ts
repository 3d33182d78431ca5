/**
 * Names wave 1 exported, kept importable (DESIGN §3: extend, never rename). Each is an alias of
 * what replaced it; new code should use the replacement named in its comment.
 */
import { encodeSseRetry, sseEncoder, SSE_KEEP_ALIVE, type DurableStreamEvent } from '@nest-jsonrpc/protocol';
import { DurableStreamRunner } from './durable/durable-stream-runner.js';

/** @deprecated Use `DurableStreamRunner` (runs, cancel, follow, sweep) and `DurableStreamAccess` (ownership). */
export const DurableStreamService = DurableStreamRunner;
/** @deprecated */
export type DurableStreamService = DurableStreamRunner;

/** @deprecated Use `encodeSseRetry` (`@nest-jsonrpc/protocol`). */
export const sseRetryFrame = encodeSseRetry;

/** @deprecated Durable attach now uses the live stream route's SSE dialect; this is its keep-alive comment (`SSE_KEEP_ALIVE`). */
export const SSE_KEEP_ALIVE_FRAME = SSE_KEEP_ALIVE;

/** @deprecated Use `sseEncoder.row(event.data, index, { id, event })`. */
export function sseEventFrame(event: DurableStreamEvent): string {
  return sseEncoder.row(event.data, event.id, { id: event.id, event: event.event });
}

/** @deprecated Use `sseEncoder.row` per event. */
export function sseEventFrames(events: readonly DurableStreamEvent[]): string {
  return events.map(sseEventFrame).join('');
}
