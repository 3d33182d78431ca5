/**
 * Server-sent events off the wire with `eventsource-parser`: bytes are decoded as streaming UTF-8
 * (a character split across network chunks is joined, never mangled) and each complete event is
 * handed to the provider's parser synchronously.
 */
import { createParser, type EventSourceMessage, type EventSourceParser } from 'eventsource-parser';
import { LlmProviderError } from '../model/errors.js';
import type { WireDecoder } from './provider-stream.js';
import type { TurnParser } from './turn-parser.js';

/** A provider parser fed with SSE events. */
export interface SseTurnParser extends TurnParser {
  onSse(event: EventSourceMessage): void;
}

/** One SSE event (a `data:` line or several) larger than this is a hostile or broken stream. */
const MAX_SSE_EVENT_CHARS = 16 * 1024 * 1024;

export class SseDecoder implements WireDecoder {
  private readonly text = new TextDecoder();
  private readonly sse: EventSourceParser;

  constructor(private readonly parser: SseTurnParser) {
    this.sse = createParser({
      onEvent: (event) => {
        // Once the provider reported an error, later events are not interpreted.
        if (!parser.error) parser.onSse(event);
      },
      onError: (error) => {
        if (error.type === 'max-buffer-size-exceeded' && !parser.error) {
          parser.error = new LlmProviderError(parser.provider, undefined, 'event_too_large', `An SSE event exceeded ${MAX_SSE_EVENT_CHARS} characters`, undefined);
        }
      },
      maxBufferSize: MAX_SSE_EVENT_CHARS,
    });
  }

  units(body: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
    return body;
  }

  feed(chunk: Uint8Array): void {
    if (this.parser.error) return;
    this.sse.feed(this.text.decode(chunk, { stream: true }));
  }

  end(): void {
    if (this.parser.error) return;
    // A last event without its blank line still counts (some servers close right after `data:`);
    // blank lines after a complete event dispatch nothing.
    this.sse.feed(`${this.text.decode()}\n\n`);
    if (!this.parser.error) this.parser.end();
  }
}
