import type { ServerResponse } from 'node:http';

/**
 * Bounds what a client that stopped reading can hold: armed when a write to `res` is refused
 * (`write()` returned false: the socket's buffers are full), disarmed on 'drain'. A response that
 * stays blocked for `ms` is destroyed — the producer is stopped (a live stream) or the
 * subscription closed (a durable attach; the stream runs on and the client can resume with
 * `Last-Event-ID`). Without it, a stalled reader keeps its socket, buffers and subscription for
 * as long as the TCP connection lives. 0 turns it off.
 *
 * Hand-written: Node's socket timeout (`setTimeout`) counts any silence, so it would also drop a
 * healthy client of a quiet stream, and it is the app's `connectionTimeout` to set.
 */
export class WriteStallTimer {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly res: ServerResponse,
    private readonly ms: number,
  ) {}

  /** A write was refused: the client has `ms` to read. */
  blocked(): void {
    if (this.ms === 0 || this.timer !== undefined) return;
    this.timer = setTimeout(this.expire, this.ms);
    this.timer.unref();
  }

  /** The client read (or the response is over). */
  drained(): void {
    if (this.timer === undefined) return;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /**
   * After `res.end()`: still blocked means the last frames wait in the buffers; the bound holds
   * until they are flushed.
   */
  ended(): void {
    if (!this.res.writableNeedDrain) return this.drained();
    this.blocked();
    this.res.once('finish', () => this.drained());
  }

  private readonly expire = (): void => {
    this.timer = undefined;
    this.res.destroy();
  };
}
