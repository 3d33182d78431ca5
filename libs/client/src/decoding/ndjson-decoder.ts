import {
  concatBytes,
  DecoderContext,
  strictUtf8Decoder,
  type StreamDecoderOptions,
  type StreamFrame,
  type StreamFrameDecoder,
} from './stream-frame.js';

const LF = 0x0a;
const CR = 0x0d;

/**
 * `application/x-ndjson`: one JSON text per `\n`-terminated line (a `\r` before the `\n` is
 * dropped). Works on bytes, not text: `\n` never occurs inside a multi-byte UTF-8 sequence, so
 * splitting on it first and decoding each whole line means a character split across network
 * chunks is never decoded in halves, and `maxFrameBytes` bounds the bytes held, exactly.
 * Blank lines are skipped. `{"error":{...}}` is the in-band error frame.
 */
export class NdjsonFrameDecoder implements StreamFrameDecoder {
  private readonly ctx: DecoderContext;
  private readonly text = strictUtf8Decoder();
  /** Bytes of the current, not yet terminated line. */
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;
  private lineNo = 0;

  constructor(options: StreamDecoderOptions = {}) {
    this.ctx = new DecoderContext(options, 'NDJSON');
  }

  decode(chunk: Uint8Array, out: StreamFrame[]): void {
    const max = this.ctx.maxFrameBytes;
    let start = 0;
    let lf = chunk.indexOf(LF);
    while (lf !== -1) {
      if (this.pendingBytes + (lf - start) > max) throw this.ctx.tooLarge(`line ${this.lineNo + 1}`);
      let line: Uint8Array;
      if (this.pendingBytes === 0) {
        line = chunk.subarray(start, lf);
      } else {
        this.pending.push(chunk.subarray(start, lf));
        line = concatBytes(this.pending, this.pendingBytes + (lf - start));
        this.pending = [];
        this.pendingBytes = 0;
      }
      this.line(line, out);
      start = lf + 1;
      lf = chunk.indexOf(LF, start);
    }
    if (start < chunk.length) {
      const rest = chunk.length - start;
      if (this.pendingBytes + rest > max) throw this.ctx.tooLarge(`line ${this.lineNo + 1}`);
      this.pending.push(chunk.subarray(start));
      this.pendingBytes += rest;
    }
  }

  finish(): void {
    if (this.pendingBytes === 0) return;
    const rest = concatBytes(this.pending, this.pendingBytes);
    this.pending = [];
    this.pendingBytes = 0;
    // Trailing whitespace is not a row; anything else without its newline was cut off mid-row.
    if (this.decodeLine(rest).trim() === '') return;
    throw this.ctx.truncated(`the last line (${rest.length} bytes) has no terminating newline`);
  }

  private line(bytes: Uint8Array, out: StreamFrame[]): void {
    this.lineNo++;
    let text = this.decodeLine(bytes);
    if (text.length > 0 && text.charCodeAt(text.length - 1) === CR) text = text.slice(0, -1);
    if (this.lineNo === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    if (text.trim() === '') return;
    const value = this.ctx.parse(text, `line ${this.lineNo}`);
    out.push(this.ctx.frame(value, 'error', `line ${this.lineNo}`));
  }

  private decodeLine(bytes: Uint8Array): string {
    try {
      return this.text.decode(bytes);
    } catch (cause) {
      throw this.ctx.garbage(`line ${this.lineNo} is not valid UTF-8`, undefined, cause);
    }
  }
}
