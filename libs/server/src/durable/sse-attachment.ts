import type { ServerResponse } from 'node:http';
import type { Logger } from '@nestjs/common';
import { isTerminalEvent, sseEncoder, SSE_END_FRAME, SSE_KEEP_ALIVE, type DurableStreamEvent } from '@nest-jsonrpc/protocol';
import { WriteStallTimer } from '../streaming/write-stall.js';
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

/**
 * One attached `GET <path>/:id` response. Writes each delivered page in one socket write, pauses
 * its subscription while the socket's buffer is full (resumed on `drain`), and ends the response
 * after the terminal event. The client going away only detaches it: the stream runs on.
 */
export class SseAttachment implements DurableEventSink {
  /** Keep-alive ticks since something was last written (the `retry:` frame counts). */
  private idleTicks = 0;
  private subscription: DurableSubscription | undefined;
  private readonly stall: WriteStallTimer;

  constructor(
    readonly res: ServerResponse,
    private readonly onClosed: (attachment: SseAttachment) => void,
    private readonly onFailed: (error: unknown, streamId: string | undefined) => void,
    stalledWriteMs = 0,
  ) {
    this.stall = new WriteStallTimer(res, stalledWriteMs);
    res.on('drain', this.onDrain);
    res.once('close', this.onClose);
  }

  bind(subscription: DurableSubscription): void {
    this.subscription = subscription;
  }

  deliver(events: readonly DurableStreamEvent[]): boolean {
    const res = this.res;
    if (res.writableEnded || res.destroyed) return false;
    this.idleTicks = 0;
    if (res.write(sseFrames(events))) return true;
    this.stall.blocked();
    return false;
  }

  finish(error?: unknown): void {
    // On a store failure the response just ends (logged): the client reconnects with Last-Event-ID.
    if (error !== undefined) this.onFailed(error, this.subscription?.streamId);
    if (!this.res.writableEnded) {
      this.res.end();
      this.stall.ended();
    }
  }

  /**
   * Called every keepAliveMs / KEEP_ALIVE_TICKS: a comment frame once nothing has been written for
   * KEEP_ALIVE_TICKS ticks, so the silence never reaches keepAliveMs (a tick per keepAliveMs
   * would let it grow to nearly twice that, past a proxy's idle timeout).
   */
  keepAlive(): void {
    if (++this.idleTicks < KEEP_ALIVE_TICKS) return;
    this.idleTicks = 0;
    const res = this.res;
    if (!res.writableEnded && !res.destroyed && res.writableLength === 0) res.write(SSE_KEEP_ALIVE);
  }

  /** Server shutdown: end the response; the client will reconnect (elsewhere) and resume. */
  end(): void {
    this.subscription?.close();
    if (!this.res.writableEnded) this.res.end();
  }

  private readonly onDrain = (): void => {
    this.stall.drained();
    this.subscription?.resume();
  };

  private readonly onClose = (): void => {
    this.stall.drained();
    this.res.off('drain', this.onDrain);
    this.subscription?.close();
    this.onClosed(this);
  };
}

/**
 * Ticks of the shared keep-alive timer per keepAliveMs: an idle response gets its comment between
 * (TICKS - 1) / TICKS and 1 x keepAliveMs after its last write, and one every keepAliveMs after that.
 */
const KEEP_ALIVE_TICKS = 4;

/** Every attached SSE response of this process, with one shared keep-alive timer for all of them. */
export class SseAttachments {
  private readonly attachments = new Set<SseAttachment>();
  private readonly timer: NodeJS.Timeout | undefined;

  constructor(
    keepAliveMs: number,
    private readonly logger: Pick<Logger, 'warn'>,
    /** A reader stalled this long is dropped (`WriteStallTimer`); 0 = never. */
    private readonly stalledWriteMs = 0,
  ) {
    if (keepAliveMs > 0) {
      this.timer = setInterval(() => {
        for (const attachment of this.attachments) attachment.keepAlive();
      }, Math.max(1, Math.floor(keepAliveMs / KEEP_ALIVE_TICKS)));
      this.timer.unref();
    }
  }

  get size(): number {
    return this.attachments.size;
  }

  open(res: ServerResponse): SseAttachment {
    const attachment = new SseAttachment(res, this.remove, this.failed, this.stalledWriteMs);
    this.attachments.add(attachment);
    return attachment;
  }

  /** Ends every response and stops the timer. */
  close(): void {
    if (this.timer) clearInterval(this.timer);
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
