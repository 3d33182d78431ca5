/**
 * The vocabulary of durable streams (DESIGN §4): what an event is, what a stream's status is.
 * Pure data, shared by the stores, the runner and the routes.
 */

/** `chunk` (a row), `progress` (a row wrapped with `progress()`), then one terminal event. */
export type DurableEventName = 'chunk' | 'progress' | 'done' | 'error' | 'cancelled';

export type DurableTerminalEventName = 'done' | 'error' | 'cancelled';

/** What `GET <path>` reports; a stream is `running` until its terminal event is committed. */
export type DurableStreamStatus = 'running' | 'completed' | 'failed' | 'cancelled';

export const DURABLE_STREAM_STATUSES: readonly DurableStreamStatus[] = Object.freeze(['running', 'completed', 'failed', 'cancelled']);

/** The status a terminal event leaves its stream in. */
export const STATUS_OF_TERMINAL: Readonly<Record<DurableTerminalEventName, DurableStreamStatus>> = Object.freeze({
  done: 'completed',
  error: 'failed',
  cancelled: 'cancelled',
});

export function isTerminalEvent(event: string): event is DurableTerminalEventName {
  return event === 'done' || event === 'error' || event === 'cancelled';
}

/**
 * One event as stored and delivered. `id` counts from 1 per stream; `data` is JSON text, kept as
 * text end to end so replaying never parses or re-serialises it.
 */
export interface DurableStreamEvent {
  id: number;
  event: DurableEventName;
  data: string;
}

/** One stream's metadata. */
export interface DurableStreamRecord {
  readonly id: string;
  readonly method: string;
  /** `ctx.user` id of the caller that started it; null for an anonymous caller. */
  readonly owner: string | null;
  readonly status: DurableStreamStatus;
  /** Events committed so far (= id of the last one; the terminal event included). */
  readonly events: number;
  /** Epoch milliseconds. */
  readonly createdAt: number;
  readonly completedAt: number | null;
}

/** `data` of the terminal events. */
export const DONE_EVENT_DATA = '{}';
export const CANCELLED_EVENT_DATA = '{}';

/** The terminal `error` written for streams whose producer died with its process. */
export const INTERRUPTED_EVENT_DATA = '{"error":{"code":-32603,"message":"Stream interrupted"}}';
