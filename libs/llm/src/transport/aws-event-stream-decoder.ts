/**
 * The binary AWS event stream (`application/vnd.amazon.eventstream`) off the wire, with the codec
 * the AWS SDKs use (`@smithy/core/event-streams`): `getChunkedStream` reassembles whole frames
 * from network chunks (a frame split anywhere, even inside its prelude, is joined) and the codec
 * checks both CRCs and decodes headers and payload.
 */
import { EventStreamCodec, getChunkedStream } from '@smithy/core/event-streams';
import { LlmProviderError } from '../model/errors.js';
import type { WireDecoder } from './provider-stream.js';
import type { TurnParser } from './turn-parser.js';

/** One decoded frame: its string headers (`:message-type`, `:event-type`, ...) and its payload text. */
export interface AwsEventFrame {
  headers: Record<string, string>;
  payload: string;
}

export interface AwsEventTurnParser extends TurnParser {
  onFrame(frame: AwsEventFrame): void;
}

/** The AWS event stream caps a message at 16 MiB; a larger announced length is a broken or hostile stream. */
export const MAX_AWS_FRAME_BYTES = 16 * 1024 * 1024;
const MIN_AWS_FRAME_BYTES = 16;

const utf8Decoder = new TextDecoder();
const utf8Encoder = new TextEncoder();

export class AwsEventStreamDecoder implements WireDecoder {
  private readonly codec = new EventStreamCodec((bytes) => utf8Decoder.decode(bytes), (text) => utf8Encoder.encode(text));

  constructor(private readonly parser: AwsEventTurnParser) {}

  async *units(body: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
    try {
      yield* getChunkedStream(checkFrameLengths(body, this.parser.provider));
    } catch (error) {
      if (error instanceof LlmProviderError) throw error;
      // A frame cut short by the end of the body (an abort is reported as such by the stream driver).
      throw new LlmProviderError(this.parser.provider, undefined, 'incomplete_stream', `The event stream broke: ${(error as Error).message}`, undefined);
    }
  }

  feed(bytes: Uint8Array): void {
    if (this.parser.error) return;
    let frame: AwsEventFrame;
    try {
      const message = this.codec.decode(bytes);
      const headers: Record<string, string> = {};
      for (const [name, header] of Object.entries(message.headers)) headers[name] = String(header.value);
      frame = { headers, payload: utf8Decoder.decode(message.body) };
    } catch (error) {
      this.parser.error = new LlmProviderError(this.parser.provider, undefined, 'invalid_frame', `An event stream frame did not decode: ${(error as Error).message}`, undefined);
      return;
    }
    this.parser.onFrame(frame);
  }

  end(): void {
    if (!this.parser.error) this.parser.end();
  }
}

/**
 * Passes the bytes through unchanged while reading each frame's announced total length (the
 * prelude's first four bytes): the framing allocates that many bytes up front, so a length above
 * the protocol's 16 MiB cap is refused before anything is allocated.
 */
async function* checkFrameLengths(body: AsyncIterable<Uint8Array>, provider: string): AsyncGenerator<Uint8Array> {
  let remaining = 0;
  let length = 0;
  let lengthBytes = 0;
  for await (const chunk of body) {
    let i = 0;
    while (i < chunk.length) {
      if (remaining > 0) {
        const skip = Math.min(remaining, chunk.length - i);
        remaining -= skip;
        i += skip;
        continue;
      }
      length = length * 256 + chunk[i++];
      if (++lengthBytes < 4) continue;
      if (length > MAX_AWS_FRAME_BYTES || length < MIN_AWS_FRAME_BYTES) {
        throw new LlmProviderError(provider, undefined, 'invalid_frame', `An event stream frame announced ${length} bytes (allowed: ${MIN_AWS_FRAME_BYTES} to ${MAX_AWS_FRAME_BYTES})`, undefined);
      }
      remaining = length - 4;
      length = 0;
      lengthBytes = 0;
    }
    yield chunk;
  }
}
