/**
 * The vocabulary of durable streams (DESIGN §4): event names, statuses, the stored event, and the
 * JSON shapes of the REST routes. Shared by the server's stores, runner and routes and the client.
 */
import { encodeErrorRow } from './stream-frames.js';

/** `chunk` (a row), `progress` (a row wrapped with `progress()`), then one terminal event. */
export type DurableEventName = 'chunk' | 'progress' | 'done' | 'error' | 'cancelled';
export type DurableTerminalEventName = 'done' | 'error' | 'cancelled';

/** What `GET <durable.path>` reports; a stream is `running` until its terminal event is committed. */
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

/** `data` of the terminal `done` and `cancelled` events. */
export const DONE_EVENT_DATA = '{}';
export const CANCELLED_EVENT_DATA = '{}';

/** The terminal `error` written for streams whose producer died with its process. */
export const INTERRUPTED_EVENT_DATA = encodeErrorRow({ code: -32603, message: 'Stream interrupted' });

/** The answer of `POST <path>` on a durable stream method. */
export interface DurableStartAnswer {
  stream_id: string;
  sse_url: string;
  status: 'running';
}

/** One stream in `GET <durable.path>` (`{"streams": [...]}`). */
export interface DurableStreamSummary {
  stream_id: string;
  method: string;
  status: DurableStreamStatus;
  /** Events committed so far, the terminal one included. */
  events: number;
  /** ISO 8601. */
  created_at: string;
  completed_at: string | null;
}

/** `GET <durable.path>/:id/events?after=&limit=`: events with their data parsed. */
export interface DurableEventsPage<T = unknown> {
  events: Array<{ id: number; event: DurableEventName; data: T }>;
}

/** `DELETE <durable.path>/:id`. */
export interface DurableCancelAnswer {
  stream_id: string;
  status: DurableStreamStatus;
}
