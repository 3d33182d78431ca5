import { JsonRpcTimeoutError, JsonRpcTransportError } from '../errors/client-errors.js';

/**
 * One HTTP exchange's cancellation: the caller's `signal`, an optional time limit (for the whole
 * exchange, or — for streams — for the longest silence between bytes), and our own abort when a
 * stream is left early. Aborting the fetch's signal is what closes the connection, so the server
 * sees the client leave. `dispose()` removes the listener and the timer: nothing outlives it.
 */
export class RequestScope {
  private readonly controller = new AbortController();
  private readonly caller: AbortSignal | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private lastActivity = 0;

  constructor(
    private readonly url: string,
    caller: AbortSignal | undefined,
    private readonly timeoutMs: number,
    private readonly idle: boolean,
  ) {
    this.caller = caller;
    if (caller !== undefined) {
      if (caller.aborted) this.controller.abort(caller.reason);
      else caller.addEventListener('abort', this, { once: true });
    }
    if (timeoutMs > 0 && !this.controller.signal.aborted) {
      if (idle) this.lastActivity = Date.now();
      this.timer = setTimeout(this.onTimer, timeoutMs);
    }
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get aborted(): boolean {
    return this.controller.signal.aborted;
  }

  /** The caller's abort reason, or our timeout error: what an aborted exchange rejects with. */
  get reason(): unknown {
    return this.controller.signal.reason;
  }

  /** Bytes arrived: pushes the idle deadline back (no timer churn: the timer re-arms itself). */
  touch(): void {
    if (this.idle) this.lastActivity = Date.now();
  }

  /** Stops the exchange (a stream left early); the connection closes. */
  abort(): void {
    if (!this.controller.signal.aborted) this.controller.abort(new DOMException('The stream was closed by the client', 'AbortError'));
  }

  dispose(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.caller?.removeEventListener('abort', this);
  }

  /** The caller's signal fired (EventListener object form: no closure per exchange). */
  handleEvent(): void {
    this.controller.abort(this.caller!.reason);
    this.dispose();
  }

  /** Wraps a failure of `fetch` or of reading the body: an abort keeps its reason, the rest is transport. */
  failure(cause: unknown, what: string): unknown {
    if (this.controller.signal.aborted) return this.controller.signal.reason;
    const detail = describeCause(cause);
    return new JsonRpcTransportError(`${what} ${this.url} failed: ${detail}`, this.url, { cause });
  }

  private readonly onTimer = (): void => {
    this.timer = undefined;
    if (this.controller.signal.aborted) return;
    const remaining = this.idle ? this.lastActivity + this.timeoutMs - Date.now() : 0;
    if (remaining > 0) {
      this.timer = setTimeout(this.onTimer, remaining);
      return;
    }
    const message = this.idle
      ? `no data from ${this.url} for ${this.timeoutMs} ms (idleTimeoutMs)`
      : `no answer from ${this.url} within ${this.timeoutMs} ms (timeoutMs)`;
    this.controller.abort(new JsonRpcTimeoutError(message, this.url, this.timeoutMs));
    this.caller?.removeEventListener('abort', this);
  };
}

/** `fetch failed (connect ECONNREFUSED 127.0.0.1:1)`: undici hides the useful part in `cause`. Duck-typed: errors may come from another realm. */
export function describeCause(cause: unknown): string {
  const message = (e: unknown) => (typeof (e as Error)?.message === 'string' ? (e as Error).message : String(e));
  const inner = (cause as { cause?: unknown })?.cause;
  return inner === undefined ? message(cause) : `${message(cause)} (${message(inner)})`;
}
