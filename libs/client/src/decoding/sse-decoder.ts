import { isErrorObject } from '@nest-jsonrpc/protocol';
import { createParser, type EventSourceMessage, type EventSourceParser, type ParseError } from 'eventsource-parser';
import {
  DecoderContext,
  type StreamDecoderOptions,
  type StreamFrame,
  type StreamFrameDecoder,
} from './stream-frame.js';

/** One server-sent event: `event` is undefined for plain `data:` events, as eventsource-parser gives it. */
export type SseEvent = EventSourceMessage;

/**
 * Bytes -> server-sent events, by `eventsource-parser` 3.x (line endings CR, LF and CRLF, BOM,
 * multi-line `data:`, comments, `id:` and `retry:`), behind a streaming strict UTF-8 decoder so a
 * character split across chunks is decoded whole. The parser's `maxBufferSize` bounds the
 * buffered line plus event (counted in UTF-16 code units, never more than the bytes).
 */
export class SseEventDecoder {
  /** @internal shared with `SseFrameDecoder`, which reads its events. */
  readonly ctx: DecoderContext;
  /** The last `retry:` the server sent, in ms. */
  retryMs: number | undefined;
  private readonly text = new TextDecoder('utf-8', { fatal: true });
  private readonly parser: EventSourceParser;
  private sink: SseEvent[] = [];
  private failure: Error | undefined;
  /** The text fed so far ends with CR: a line end the parser holds back in case LF follows. */
  private endsWithCr = false;

  constructor(options: StreamDecoderOptions = {}, format = 'SSE') {
    this.ctx = new DecoderContext(options, format);
    this.parser = createParser({
      onEvent: (event) => this.sink.push(event),
      onRetry: (ms) => (this.retryMs = ms),
      onError: (error: ParseError) => {
        // Unknown fields and bad `retry:` values are ignored, as the SSE spec says; only the
        // buffer bound is fatal.
        if (error.type === 'max-buffer-size-exceeded') this.failure ??= this.ctx.tooLarge('an event');
      },
      maxBufferSize: this.ctx.maxFrameBytes,
    });
  }

  /** Feeds one chunk; appends complete events to `out`. */
  decode(chunk: Uint8Array, out: SseEvent[]): void {
    let text: string;
    try {
      text = this.text.decode(chunk, { stream: true });
    } catch (cause) {
      throw this.ctx.garbage('the body is not valid UTF-8', undefined, cause);
    }
    if (text === '') return;
    this.endsWithCr = text.charCodeAt(text.length - 1) === 0x0d;
    this.sink = out;
    this.parser.feed(text);
    if (this.failure) throw this.failure;
  }

  /**
   * The body ended: appends an event its final CR completes; a half-received event is dropped, as
   * SSE says (callers decide what that means).
   */
  finish(out: SseEvent[]): void {
    try {
      this.text.decode();
    } catch (cause) {
      throw this.ctx.garbage('the body ends inside a UTF-8 character', undefined, cause);
    }
    if (this.endsWithCr) {
      this.sink = out;
      this.parser.feed('\n'); // CR then LF is one line end: exactly what the held-back CR was
    }
    this.parser.reset();
  }
}

/**
 * `text/event-stream` as the live stream route writes it (docs/streaming.md, "Wire format"): `data: <json>` rows,
 * `event: error` carrying `{"error":{...}}`, and a final `event: end` (`data: {}`). Comments
 * (keep-alives) and unknown event types are ignored, as an EventSource would. `chunk`/`progress`
 * rows and the `done`/`cancelled` terminals of a durable stream served live are understood too.
 * An event with empty `data` carries no row and is skipped.
 */
export class SseFrameDecoder implements StreamFrameDecoder {
  private readonly events: SseEventDecoder;
  private readonly batch: SseEvent[] = [];
  private ended = false;

  constructor(options: StreamDecoderOptions = {}) {
    this.events = new SseEventDecoder(options);
  }

  decode(chunk: Uint8Array, out: StreamFrame[]): void {
    if (this.ended) return;
    const batch = this.batch;
    batch.length = 0;
    try {
      this.events.decode(chunk, batch);
    } finally {
      // Events completed before a failure in the same chunk are still delivered, in order.
      for (let i = 0; i < batch.length && !this.ended; i++) this.frame(batch[i], out);
      batch.length = 0;
    }
  }

  finish(out: StreamFrame[]): void {
    if (this.ended) return;
    const batch = this.batch;
    batch.length = 0;
    this.events.finish(batch);
    for (let i = 0; i < batch.length && !this.ended; i++) this.frame(batch[i], out);
    batch.length = 0;
    if (this.ended) return;
    throw this.events.ctx.truncated('the body ended without the final `event: end`');
  }

  private frame(event: SseEvent, out: StreamFrame[]): void {
    const ctx = this.events.ctx;
    switch (event.event) {
      case undefined:
      case 'message':
      case 'chunk':
      case 'progress':
        if (event.data !== '') out.push(ctx.row(ctx.parse(event.data, 'event data')));
        return;
      case 'error': {
        const value = ctx.parse(event.data, '`event: error` data') as { error?: unknown } | null;
        const error = value !== null && typeof value === 'object' ? value.error : undefined;
        if (!isErrorObject(error)) throw ctx.garbage('`event: error` without an `{"error":{code,message}}` object', event.data);
        out.push({ type: 'error', error });
        this.ended = true;
        return;
      }
      case 'end':
      case 'done':
      case 'cancelled':
        out.push({ type: 'end', reason: event.event });
        this.ended = true;
        return;
      default:
        return;
    }
  }
}
