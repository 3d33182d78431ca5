import type { ServerResponse } from 'node:http';
import type { Logger } from '@nestjs/common';
import {
  encodeSseEvent,
  isTerminalEvent,
  sseEncoder,
  SSE_END_FRAME,
  STORE_UNAVAILABLE_EVENT_DATA,
  type DurableStreamEvent,
} from '@nest-jsonrpc/protocol';
import { StreamStoreUnavailableError } from '../stream-stores/stream-store-unavailable.js';
import { StreamOutput, type KeepAliveClock, type StreamOutputListener } from '../streaming/stream-output.js';
import type { DurableEventSink, DurableSubscription } from './durable-subscription.js';

/**
 * Several events in one string, so a replayed page costs one socket write; the same SSE dialect
 * as the live stream route (its encoder, its escaping), and after the terminal event its final
 * `event: end`, so an EventSource closes instead of reconnecting.
 */
function sseFrames(events: readonly DurableStreamEvent[]): string {
  let text = '';
  for (let i = 0; i < events.length; i++) {
    const e = events[i];
    text += sseEncoder.row(e.data, e.id, { id: e.id, event: e.event });
  }
  return isTerminalEvent(events[events.length - 1].event) ? text + SSE_END_FRAME : text;
}

/** What an attached client gets when the store stays unreachable: a frame without an id (no event of the stream), then `end`. */
const STORE_UNAVAILABLE_FRAMES = encodeSseEvent(STORE_UNAVAILABLE_EVENT_DATA, { event: 'error' }) + SSE_END_FRAME;

/**
 * One attached `GET <path>/:id` response. Writes each delivered page in one socket write, pauses
 * its subscription while the socket's buffer is full (resumed on `drain`), and ends the response
 * after the terminal event. The client going away only detaches it: the stream runs on. The
 * socket side (backpressure, the stalled-reader bound, keep-alive comments) is the live stream
 * route's own `StreamOutput`.
 */
export class SseAttachment implements DurableEventSink, StreamOutputListener {
  private subscription: DurableSubscription | undefined;
  private readonly output: StreamOutput;

  constructor(
    res: ServerResponse,
    private readonly onClosed: (attachment: SseAttachment) => void,
    private readonly onFailed: (error: unknown, streamId: string | undefined) => void,
    stalledWriteMs: number,
    keepAlive: KeepAliveClock,
  ) {
    this.output = new StreamOutput(res, this, stalledWriteMs, keepAlive);
    this.output.start();
  }

  bind(subscription: DurableSubscription): void {
    this.subscription = subscription;
  }

  deliver(events: readonly DurableStreamEvent[]): boolean {
    return this.output.open && this.output.write(sseFrames(events));
  }

  finish(error?: unknown): void {
    // On a store failure the response ends (logged) and the client reconnects with Last-Event-ID.
    // An unreachable store says so first, in a frame without an id: it is not an event of the stream.
    if (error !== undefined) this.onFailed(error, this.subscription?.streamId);
    this.output.end(error instanceof StreamStoreUnavailableError ? STORE_UNAVAILABLE_FRAMES : undefined);
  }

  /** Server shutdown: end the response; the client will reconnect (elsewhere) and resume. */
  end(): void {
    this.subscription?.close();
    this.output.end();
  }

  /** `StreamOutput`: the socket took what was waiting. */
  onDrain(): void {
    this.subscription?.resume();
  }

  /** `StreamOutput`: the response closed. */
  onClose(): void {
    this.subscription?.close();
    this.onClosed(this);
  }
}

/** Every attached SSE response of this process. */
export class SseAttachments {
  private readonly attachments = new Set<SseAttachment>();

  constructor(
    private readonly keepAlive: KeepAliveClock,
    private readonly logger: Pick<Logger, 'warn'>,
    /** A reader stalled this long is dropped (`WriteStallTimer`); 0 = never. */
    private readonly stalledWriteMs = 0,
  ) {}

  get size(): number {
    return this.attachments.size;
  }

  open(res: ServerResponse): SseAttachment {
    const attachment = new SseAttachment(res, this.remove, this.failed, this.stalledWriteMs, this.keepAlive);
    this.attachments.add(attachment);
    return attachment;
  }

  /** Ends every response. */
  close(): void {
    for (const attachment of [...this.attachments]) attachment.end();
    this.attachments.clear();
  }

  private readonly failed = (error: unknown, streamId: string | undefined): void => {
    this.logger.warn(`Attached SSE for durable stream ${streamId} ended early: ${error instanceof Error ? error.message : String(error)}`);
  };

  private readonly remove = (attachment: SseAttachment): void => {
    this.attachments.delete(attachment);
  };
}
