import type { ServerResponse } from 'node:http';
import { WriteStallTimer } from './write-stall.js';

/** What a stream's producer side hears from its socket. */
export interface StreamOutputListener {
  /** The socket took what was waiting: write again. */
  onDrain(): void;
  /** The response closed (ended and flushed, or the client went away). */
  onClose(): void;
}

/**
 * Ticks of a keep-alive clock per `keepAliveMs`. A response silent for keepAliveMs less one tick
 * gets its comment at the next tick — between ⅞ and 1× keepAliveMs after its last write, then one
 * every keepAliveMs while it stays idle — so the silence never reaches keepAliveMs (a tick per
 * keepAliveMs would let it grow to nearly twice that, past a proxy's idle timeout). Silence is
 * measured in time, not counted in ticks: an event loop too busy to tick on time delays a comment
 * by its lag once, not once per tick.
 */
const KEEP_ALIVE_TICKS = 8;

/**
 * One timer for every SSE response of a route family (live streams, durable attaches), however
 * many: thousands of idle subscribers cost one interval, not one timer each. Runs only while it
 * has responses.
 */
export class KeepAliveClock {
  private readonly outputs = new Set<StreamOutput>();
  private timer: NodeJS.Timeout | undefined;
  /** Between two ticks, in ms. */
  readonly tickMs: number;
  /** The silence, in ms, after which a tick writes the comment. */
  readonly idleMs: number;

  constructor(
    /** 0: no keep-alive at all. */
    readonly ms: number,
    /** The comment frame written to an idle response. */
    readonly frame: string,
  ) {
    this.tickMs = Math.max(1, Math.floor(ms / KEEP_ALIVE_TICKS));
    this.idleMs = ms - this.tickMs;
  }

  add(output: StreamOutput): void {
    if (this.ms === 0) return;
    this.outputs.add(output);
    if (this.timer !== undefined) return;
    this.timer = setInterval(this.tick, this.tickMs);
    this.timer.unref();
  }

  delete(output: StreamOutput): void {
    if (!this.outputs.delete(output) || this.outputs.size > 0 || this.timer === undefined) return;
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private readonly tick = (): void => {
    const now = Date.now();
    for (const output of this.outputs) output.keepAliveTick(now);
  };
}

/**
 * The socket side of every streamed answer — a live stream in any format, a durable attach: writes
 * with backpressure (a refused write waits for 'drain', told to the listener), the stalled-reader
 * bound (`WriteStallTimer`: a client that reads nothing for `limits.stalledWriteMs` while writes
 * wait is dropped), and, for SSE, the keep-alive comment of the shared clock once nothing has been
 * written for a while (never while a write waits: the client is not reading anyway).
 */
export class StreamOutput {
  /** The last write was refused; waiting for 'drain'. */
  blocked = false;
  /** When something was last written (`Date.now()`), for the keep-alive clock; 0 without one. */
  private lastWrite = 0;
  private readonly stall: WriteStallTimer;

  constructor(
    readonly res: ServerResponse,
    private readonly listener: StreamOutputListener,
    stalledWriteMs: number,
    private readonly keepAlive?: KeepAliveClock,
  ) {
    this.stall = new WriteStallTimer(res, stalledWriteMs);
  }

  /** Whether the response still takes writes. */
  get open(): boolean {
    return !this.res.writableEnded && !this.res.destroyed;
  }

  /** Starts listening to the socket (and, for SSE, keeping it alive). */
  start(): void {
    this.res.once('close', this.onClose);
    // One listener for the response's life, not a `once` per refused write: a compressing middleware
    // (`compression`) sends `on('drain')` to its zlib stream, where a `once` wrapper never removes
    // itself (it calls `res.removeListener`), so every refused write would leave one listener behind.
    this.res.on('drain', this.onDrain);
    if (this.keepAlive === undefined) return;
    this.lastWrite = Date.now();
    this.keepAlive.add(this);
  }

  /** Writes `chunk`; false when the socket's buffer is full (the listener hears `onDrain`). */
  write(chunk: string): boolean {
    if (this.keepAlive !== undefined) this.lastWrite = Date.now();
    if (this.res.write(chunk)) return true;
    if (!this.blocked) {
      this.blocked = true;
      this.stall.blocked();
    }
    return false;
  }

  /** Ends the response with `chunk`; the stall bound holds until the last frames are flushed. */
  end(chunk?: string): void {
    this.keepAlive?.delete(this);
    if (this.res.writableEnded) return;
    this.res.end(chunk);
    this.stall.ended();
  }

  /** @internal the clock's tick: a comment once nothing has been written for the clock's `idleMs`. */
  keepAliveTick(now: number): void {
    const clock = this.keepAlive!;
    if (now - this.lastWrite < clock.idleMs) return;
    // The next comment of an idle response a whole keepAliveMs after this one, as after a write.
    this.lastWrite = now + clock.tickMs;
    if (!this.blocked && this.open && this.res.writableLength === 0) this.res.write(clock.frame);
  }

  private readonly onDrain = (): void => {
    if (!this.blocked) return;
    this.blocked = false;
    this.stall.drained();
    this.listener.onDrain();
  };

  private readonly onClose = (): void => {
    this.keepAlive?.delete(this);
    this.stall.drained();
    // Behind `compression` the listener sits on its zlib stream, which `res.off` does not reach: a
    // late 'drain' from there finds nothing blocked.
    this.blocked = false;
    this.res.off('drain', this.onDrain);
    this.listener.onClose();
  };
}
