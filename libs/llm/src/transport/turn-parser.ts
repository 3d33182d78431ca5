/**
 * The base of every provider's stream parser: the wire decoder hands it provider events
 * synchronously; it appends normalised events to `out`, which the stream driver yields after each
 * network read. A provider error inside the stream is recorded in `error` (not thrown from the
 * decoder's callback) so the events before it are still delivered first.
 */
import type { LlmEvent, LlmFinishEvent, LlmFinishReason, LlmRawEvent, LlmUsage } from '../model/events.js';
import { LlmProviderError } from '../model/errors.js';

export type StreamItem = LlmEvent | LlmRawEvent;

export abstract class TurnParser {
  /** Events produced by the last decoded bytes, drained by the driver. */
  readonly out: StreamItem[] = [];
  /** Set by a provider error event: thrown once `out` has been delivered. */
  error: Error | undefined;
  /** Set once the provider signalled the end of the turn and `finish` is in `out`. */
  finished = false;

  protected usage: LlmUsage | undefined;
  protected reason: LlmFinishReason | undefined;
  protected rawReason: string | undefined;

  constructor(
    readonly provider: string,
    private readonly raw: boolean,
  ) {}

  /** The body ended: flush what is pending, or report a stream cut short. */
  abstract end(): void;

  /** Adds the provider's own event when `{ raw: true }` was asked for. */
  protected emitRaw(name: string | undefined, data: unknown): void {
    if (this.raw) this.out.push(name === undefined ? { type: 'raw', provider: this.provider, data } : { type: 'raw', provider: this.provider, name, data });
  }

  /** Pushes the one `finish` of the turn (later calls are ignored). */
  protected finish(): void {
    if (this.finished) return;
    this.finished = true;
    const event: LlmFinishEvent = { type: 'finish', reason: this.reason ?? 'other' };
    if (this.rawReason !== undefined) event.rawReason = this.rawReason;
    if (this.usage) event.usage = this.usage;
    this.out.push(event);
  }

  /** Records a provider error event; nothing after it is processed. */
  protected fail(status: number | undefined, type: string, message: string, body: unknown): void {
    if (!this.error) this.error = new LlmProviderError(this.provider, status, type, message, body);
  }

  /** Parses one event's JSON payload; a payload that is not JSON is a provider error, not a crash. */
  protected parseJson(text: string): any {
    try {
      return JSON.parse(text);
    } catch {
      this.fail(undefined, 'invalid_event', `The ${this.provider} stream sent an event that is not JSON: ${text.slice(0, 200)}`, text);
      return undefined;
    }
  }

  /** The body ended before the provider's end-of-turn signal: a cut connection, not a finished answer. */
  protected failTruncated(): void {
    this.fail(undefined, 'incomplete_stream', `The ${this.provider} stream ended before the end of the turn`, undefined);
  }
}

/** Drops undefined fields so usage objects compare and serialise cleanly. */
export function compactUsage(usage: LlmUsage): LlmUsage | undefined {
  const out: LlmUsage = {};
  let any = false;
  for (const key of ['inputTokens', 'outputTokens', 'totalTokens', 'cachedInputTokens', 'reasoningTokens'] as const) {
    const value = usage[key];
    if (typeof value === 'number') {
      out[key] = value;
      any = true;
    }
  }
  return any ? out : undefined;
}
