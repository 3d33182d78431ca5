/**
 * The vocabulary of durable streams (docs/durable.md, "Wire"): event names, statuses, the stored event, and the
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

/** The message of -32603 when the stream store cannot be reached (a start, a REST route, an attached client). */
export const STORE_UNAVAILABLE_MESSAGE = 'Stream store unavailable';

/**
 * `data` of the `error` event that ends a stream whose producer could not commit through a store
 * outage (its buffer filled up), and of the id-less `error` frame an attached client gets when the
 * store stays unreachable: that one is not part of the stream, so a client reconnects later with
 * `Last-Event-ID` and resumes.
 */
export const STORE_UNAVAILABLE_EVENT_DATA = encodeErrorRow({ code: -32603, message: STORE_UNAVAILABLE_MESSAGE });

/**
 * `data` of the `error` event that ends a stream whose store lost events it had acknowledged (a
 * Redis restarted without them): the stream ends where the store's history ends, rather than
 * going on under ids some client already saw with other events.
 */
export const STORE_LOST_EVENTS_EVENT_DATA = encodeErrorRow({ code: -32603, message: 'Stream store lost events' });

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

/** `GET <durable.path>`: the caller's streams, newest first. */
export interface DurableStreamList {
  streams: DurableStreamSummary[];
}

/** `GET <durable.path>/:id/events?after=&limit=`: events with their data parsed. */
export interface DurableEventsPage<T = unknown> {
  events: Array<{ id: number; event: DurableEventName; data: T }>;
}

/**
 * The JSON text of a `DurableEventsPage` of stored events: each event's `data` (stored JSON text)
 * is spliced in as it is, never parsed and re-serialised.
 */
export function encodeDurableEventsPage(events: readonly DurableStreamEvent[]): string {
  let text = '{"events":[';
  for (let i = 0; i < events.length; i++) {
    const e = events[i];
    text += `${i ? ',' : ''}{"id":${e.id},"event":"${e.event}","data":${e.data}}`;
  }
  return `${text}]}`;
}

/** `DELETE <durable.path>/:id`. */
export interface DurableCancelAnswer {
  stream_id: string;
  status: DurableStreamStatus;
}
