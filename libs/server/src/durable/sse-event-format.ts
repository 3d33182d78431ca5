/**
 * Server-Sent Events framing for the attach route (DESIGN §4). Pure string functions, no I/O.
 * Written by hand because it is four lines of the WHATWG format; `data` is always one line of
 * JSON (JSON.stringify never emits a raw newline), so no line splitting is needed.
 */
import type { DurableStreamEvent } from './durable-event.js';

/** The first frame: how long a browser's EventSource waits before reconnecting. */
export function sseRetryFrame(retryMs: number): string {
  return `retry: ${retryMs}\n\n`;
}

/** A comment frame that keeps proxies and load balancers from closing an idle stream. */
export const SSE_KEEP_ALIVE_FRAME = ': keep-alive\n\n';

export function sseEventFrame(event: DurableStreamEvent): string {
  return `id: ${event.id}\nevent: ${event.event}\ndata: ${event.data}\n\n`;
}

/** Several events in one string, so a replayed page costs one socket write. */
export function sseEventFrames(events: readonly DurableStreamEvent[]): string {
  let text = '';
  for (let i = 0; i < events.length; i++) {
    const e = events[i];
    text += `id: ${e.id}\nevent: ${e.event}\ndata: ${e.data}\n\n`;
  }
  return text;
}
