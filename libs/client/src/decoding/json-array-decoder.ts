import { isErrorObject } from '@nest-jsonrpc/protocol';
import {
  concatBytes,
  DecoderContext,
  strictUtf8Decoder,
  type StreamDecoderOptions,
  type StreamFrame,
  type StreamFrameDecoder,
} from './stream-frame.js';

const enum Phase {
  Start, // before `[` (whitespace, a leading BOM)
  First, // after `[`: an element or `]`
  Next, // after `,`: an element
  Element, // inside an element
  After, // after an element: `,` or `]`
  Done, // after `]`: whitespace only
  Envelope, // the body is an object, not an array: a JSON-RPC error envelope, read whole
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const BOM = [0xef, 0xbb, 0xbf];

function isWhitespace(b: number): boolean {
  return b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
}

/**
 * `application/json` written progressively: `[`, rows joined by `,`, `]`, the last element being
 * `{"_error":{...}}` when the stream failed. Each element is handed out as soon as its last byte
 * arrives, not at `]`: objects, arrays and strings when they close, numbers and literals at the
 * following `,`/`]`/whitespace (nothing earlier can tell `1` from `12`).
 *
 * Hand-written rather than a streaming JSON parser library: only element boundaries are found here
 * (a byte scan tracking depth and strings; the structural characters are ASCII, which never occur
 * inside a multi-byte UTF-8 sequence), and each element is then decoded and parsed by the native
 * `JSON.parse`, which is several times faster than parsing JSON character by character in JS.
 */
export class JsonArrayFrameDecoder implements StreamFrameDecoder {
  private readonly ctx: DecoderContext;
  private readonly text = strictUtf8Decoder();
  private phase = Phase.Start;
  private offset = 0; // bytes seen so far, for the BOM and messages
  private depth = 0;
  private inString = false;
  private escaped = false;
  private scalar = false;
  private parts: Uint8Array[] = [];
  private partsBytes = 0;
  private index = 0;
  /** An error frame ended the stream; whatever follows is not read. */
  private stopped = false;

  constructor(options: StreamDecoderOptions = {}) {
    this.ctx = new DecoderContext(options, 'JSON array');
  }

  decode(chunk: Uint8Array, out: StreamFrame[]): void {
    if (this.stopped) return;
    const n = chunk.length;
    let elementStart = this.phase === Phase.Element || this.phase === Phase.Envelope ? 0 : -1;
    for (let i = 0; i < n; i++) {
      const b = chunk[i];
      switch (this.phase) {
        case Phase.Element:
          if (this.scalar) {
            if (isWhitespace(b) || b === COMMA || b === CLOSE_BRACKET) {
              this.complete(chunk, elementStart, i, out);
              if (this.stopped) return;
              elementStart = -1;
              this.phase = Phase.After;
              i--; // the terminator belongs to the array, not the element
            }
          } else if (this.inString) {
            if (this.escaped) this.escaped = false;
            else if (b === BACKSLASH) this.escaped = true;
            else if (b === QUOTE) {
              this.inString = false;
              if (this.depth === 0) {
                this.complete(chunk, elementStart, i + 1, out);
                if (this.stopped) return;
                elementStart = -1;
                this.phase = Phase.After;
              }
            }
          } else if (b === QUOTE) this.inString = true;
          else if (b === OPEN_BRACE || b === OPEN_BRACKET) this.depth++;
          else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) {
            if (--this.depth === 0) {
              this.complete(chunk, elementStart, i + 1, out);
              if (this.stopped) return;
              elementStart = -1;
              this.phase = Phase.After;
            }
          }
          break;
        case Phase.First:
        case Phase.Next:
          if (isWhitespace(b)) break;
          if (b === CLOSE_BRACKET) {
            if (this.phase === Phase.Next) throw this.unexpected(chunk, i, 'an element after `,`');
            this.phase = Phase.Done;
            out.push({ type: 'end', reason: 'end' });
            break;
          }
          if (b === COMMA) throw this.unexpected(chunk, i, 'an element');
          this.phase = Phase.Element;
          elementStart = i;
          this.depth = b === OPEN_BRACE || b === OPEN_BRACKET ? 1 : 0;
          this.inString = b === QUOTE;
          this.escaped = false;
          this.scalar = this.depth === 0 && !this.inString;
          break;
        case Phase.After:
          if (isWhitespace(b)) break;
          if (b === COMMA) this.phase = Phase.Next;
          else if (b === CLOSE_BRACKET) {
            this.phase = Phase.Done;
            out.push({ type: 'end', reason: 'end' });
          } else throw this.unexpected(chunk, i, '`,` or `]`');
          break;
        case Phase.Done:
          if (!isWhitespace(b)) throw this.unexpected(chunk, i, 'nothing after the closing `]`');
          break;
        case Phase.Start: {
          const at = this.offset + i;
          if (at < 3 && b === BOM[at] && (at === 0 || this.partsBytes === at)) {
            this.partsBytes = at + 1; // counts BOM bytes seen, only while in Start
            break;
          }
          if (this.partsBytes !== 0 && this.partsBytes < 3) throw this.unexpected(chunk, i, 'the rest of a UTF-8 BOM');
          this.partsBytes = 0;
          if (isWhitespace(b)) break;
          if (b === OPEN_BRACKET) this.phase = Phase.First;
          else if (b === OPEN_BRACE) {
            this.phase = Phase.Envelope;
            elementStart = i;
          } else throw this.unexpected(chunk, i, '`[`');
          break;
        }
        case Phase.Envelope:
          i = n; // read whole, parsed in finish()
          break;
      }
    }
    this.offset += n;
    if (elementStart !== -1) {
      const part = chunk.subarray(elementStart);
      if (this.partsBytes + part.length > this.ctx.maxFrameBytes) throw this.ctx.tooLarge(`element ${this.index}`);
      this.parts.push(part);
      this.partsBytes += part.length;
    }
  }

  finish(out: StreamFrame[]): void {
    if (this.phase === Phase.Done || this.stopped) return;
    // A number at the very end may have lost digits (`12` cut to `1`): it is not delivered.
    if (this.phase === Phase.Envelope) {
      const body = this.decodeText(concatBytes(this.parts, this.partsBytes));
      const value = this.ctx.parse(body, 'the body');
      const error = (value as { error?: unknown }).error;
      if (isErrorObject(error)) {
        out.push({ type: 'error', error });
        return;
      }
      throw this.ctx.garbage('expected a JSON array, got an object that is not a JSON-RPC error', body);
    }
    if (this.phase === Phase.Start) throw this.ctx.truncated('the body ended before `[`');
    throw this.ctx.truncated(
      this.phase === Phase.Element ? `the body ends inside element ${this.index}` : 'the body ended without the closing `]`',
    );
  }

  private complete(chunk: Uint8Array, start: number, end: number, out: StreamFrame[]): void {
    const length = end - start;
    if (this.partsBytes + length > this.ctx.maxFrameBytes) throw this.ctx.tooLarge(`element ${this.index}`);
    let bytes = chunk.subarray(start, end);
    if (this.partsBytes !== 0) {
      this.parts.push(bytes);
      bytes = concatBytes(this.parts, this.partsBytes + length);
      this.parts = [];
      this.partsBytes = 0;
    }
    const value = this.ctx.parse(this.decodeText(bytes), `element ${this.index}`);
    this.index++;
    const frame = this.ctx.frame(value, '_error', `element ${this.index - 1}`);
    out.push(frame);
    if (frame.type === 'error') this.stopped = true;
  }

  private decodeText(bytes: Uint8Array): string {
    try {
      return this.text.decode(bytes);
    } catch (cause) {
      throw this.ctx.garbage(`element ${this.index} is not valid UTF-8`, undefined, cause);
    }
  }

  private unexpected(chunk: Uint8Array, i: number, expected: string): Error {
    const near = new TextDecoder().decode(chunk.subarray(i, i + 40));
    return this.ctx.garbage(`expected ${expected} at byte ${this.offset + i}, got ${JSON.stringify(near)}`, near);
  }
}
