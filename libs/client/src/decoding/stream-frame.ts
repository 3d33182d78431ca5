import { classifyStreamValue } from '@nest-jsonrpc/protocol';
import {
  JsonRpcProtocolError,
  JsonRpcResponseTooLargeError,
  JsonRpcStreamTruncatedError,
  type JsonRpcErrorObject,
} from '../errors/client-errors.js';

/**
 * What a stream decoder turns bytes into. Decoders are pure (bytes in, frames out, no I/O), so
 * they can be fed adversarially in unit tests and reused outside the client.
 */
export type StreamFrame =
  | { readonly type: 'row'; readonly value: unknown }
  | { readonly type: 'error'; readonly error: JsonRpcErrorObject }
  /** The format's explicit end (SSE `end`/`done`/`cancelled`, the JSON array's `]`). */
  | { readonly type: 'end'; readonly reason: StreamEndReason };

export type StreamEndReason = 'end' | 'done' | 'cancelled' | 'eof';

export interface StreamFrameDecoder {
  /** Decodes one network chunk, appending complete frames to `out` in order. Throws on garbage. */
  decode(chunk: Uint8Array, out: StreamFrame[]): void;
  /**
   * The body ended. Appends what the remaining bytes complete; throws JsonRpcStreamTruncatedError
   * when the format's end marker never came. NDJSON has no end marker: a final newline is its end.
   */
  finish(out: StreamFrame[]): void;
}

/** Where the bytes came from, for error messages; and the buffering bound. */
export interface StreamDecoderOptions {
  /** Largest incomplete frame (line, event, array element) buffered, in bytes. Default 16 MiB. */
  maxFrameBytes?: number;
  url?: string;
  contentType?: string | null;
}

export const DEFAULT_MAX_FRAME_BYTES = 16 * 1024 * 1024;

export class DecoderContext {
  readonly maxFrameBytes: number;
  readonly url: string;
  readonly contentType: string | null | undefined;
  /** Rows emitted so far, reported by truncation errors. */
  rows = 0;

  constructor(options: StreamDecoderOptions, readonly format: string) {
    this.maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
    this.url = options.url ?? '';
    this.contentType = options.contentType;
  }

  garbage(message: string, snippet?: string, cause?: unknown): JsonRpcProtocolError {
    return new JsonRpcProtocolError(`${this.format} stream: ${message}`, {
      url: this.url,
      status: 200,
      contentType: this.contentType,
      snippet,
      cause,
    });
  }

  tooLarge(what: string): JsonRpcResponseTooLargeError {
    return new JsonRpcResponseTooLargeError('maxFrameBytes', this.maxFrameBytes, {
      url: this.url,
      status: 200,
      contentType: this.contentType,
      what: `${this.format} stream: ${what}`,
    });
  }

  truncated(what: string): JsonRpcStreamTruncatedError {
    return new JsonRpcStreamTruncatedError(
      `${this.format} stream truncated after ${this.rows} row(s): ${what}`,
      this.url,
      this.rows,
    );
  }

  /** Parses one frame's JSON text; garbage becomes a protocol error quoting it. */
  parse(text: string, where: string): unknown {
    try {
      return JSON.parse(text);
    } catch (cause) {
      throw this.garbage(`${where} is not JSON`, text, cause);
    }
  }

  row(value: unknown): StreamFrame {
    this.rows++;
    return { type: 'row', value };
  }

  /**
   * A decoded value as a frame, by the shared rule of `@nest-jsonrpc/protocol`: a row, or the
   * in-band error frame (`{"<key>": {code, message, data?}}`). A frame that tries to be an error
   * but is not a valid one (a code of 1.5) is garbage, never a row: the stream must not seem to
   * succeed.
   */
  frame(value: unknown, key: 'error' | '_error', where: string): StreamFrame {
    const kind = classifyStreamValue(value, key);
    if (kind.kind === 'row') return this.row(value);
    if (kind.kind === 'error') return { type: 'error', error: kind.error };
    throw this.garbage(`${where} is an error frame without a valid error object (an integer code and a string message)`, JSON.stringify(value));
  }
}

/** A strict UTF-8 decoder that keeps U+FEFF (BOMs are stripped once, at the start, by the decoders). */
export function strictUtf8Decoder(): TextDecoder {
  return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
}

export function concatBytes(parts: Uint8Array[], total: number): Uint8Array {
  if (parts.length === 1) return parts[0];
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
