/**
 * Producing `result_chunk` rows (docs/streaming.md, "Chunked results"; the row itself is `@nest-jsonrpc/protocol`'s): a large
 * result (a file, a long text) sent as a sequence of stream rows that a client reassembles.
 * Server-side because it reads Node `Buffer`s; no Nest, no Fastify.
 */
import { RESULT_CHUNK_TYPE, type ResultChunkEncoding, type ResultChunkRow } from '@nest-jsonrpc/protocol';

export interface ResultChunksOptions {
  /** Default: `utf8` for a string source, `base64` otherwise. */
  encoding?: ResultChunkEncoding;
  /** Bytes of source data per chunk (UTF-8 bytes for text). Default 65536. */
  chunkSize?: number;
}

export type ResultChunkPiece = string | Uint8Array;
export type ResultChunkSource = ResultChunkPiece | AsyncIterable<ResultChunkPiece> | Iterable<ResultChunkPiece>;

export const DEFAULT_RESULT_CHUNK_SIZE = 65_536;

/**
 * Turns a string, bytes, or an (async) iterable of them into `result_chunk` rows of `chunkSize`
 * source bytes each, whatever the sizes of the pieces the source yields.
 * - `utf8` chunks never split a character: a chunk ends on a character boundary, so it may be a
 *   few bytes short (or, when `chunkSize` is smaller than one character, hold that character).
 *   Bytes that are not UTF-8 become U+FFFD, as `TextDecoder` does.
 * - `base64` chunks are encoded one by one, so each decodes on its own (padding included).
 * - The last chunk has `more: false`; an empty source yields one empty chunk.
 * Arguments are checked at once (a programming error should not wait for the first row).
 */
export function resultChunks(resultId: string, source: ResultChunkSource, options: ResultChunksOptions = {}): AsyncIterable<ResultChunkRow> {
  if (typeof resultId !== 'string' || resultId.length === 0) throw new TypeError('resultChunks: resultId must be a non-empty string');
  const chunkSize = options.chunkSize ?? DEFAULT_RESULT_CHUNK_SIZE;
  if (!Number.isSafeInteger(chunkSize) || chunkSize < 1) throw new TypeError(`resultChunks: chunkSize must be a positive integer, got ${String(chunkSize)}`);
  const encoding = options.encoding ?? (typeof source === 'string' ? 'utf8' : 'base64');
  if (encoding !== 'utf8' && encoding !== 'base64') throw new TypeError(`resultChunks: encoding must be "utf8" or "base64", got ${String(encoding)}`);
  if (!isPiece(source) && !isIterable(source)) {
    throw new TypeError('resultChunks: source must be a string, a Uint8Array, or an (async) iterable of them');
  }
  return { [Symbol.asyncIterator]: () => chunkRows(resultId, source, encoding, chunkSize) };
}

function isPiece(value: unknown): value is ResultChunkPiece {
  return typeof value === 'string' || value instanceof Uint8Array;
}

function isIterable(value: unknown): value is AsyncIterable<ResultChunkPiece> | Iterable<ResultChunkPiece> {
  return (
    value !== null &&
    typeof value === 'object' &&
    (typeof (value as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function' || typeof (value as Iterable<unknown>)[Symbol.iterator] === 'function')
  );
}

function toBuffer(piece: unknown): Buffer {
  if (typeof piece === 'string') return Buffer.from(piece, 'utf8');
  if (piece instanceof Uint8Array) return Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength);
  throw new TypeError(`resultChunks: the source yielded ${piece === null ? 'null' : typeof piece}, expected a string or a Uint8Array`);
}

/** Where a UTF-8 chunk of at most `size` bytes from `start` may end without splitting a character. */
function utf8Boundary(buffer: Buffer, start: number, size: number): number {
  let end = start + size;
  if (end >= buffer.length) return buffer.length;
  // Back off continuation bytes (10xxxxxx): `end` must sit on the first byte of a character.
  while (end > start && (buffer[end] & 0xc0) === 0x80) end--;
  if (end > start) return end;
  // One character longer than `size`: take it whole.
  end = start + 1;
  while (end < buffer.length && (buffer[end] & 0xc0) === 0x80) end++;
  return end;
}

async function* chunkRows(
  resultId: string,
  source: ResultChunkSource,
  encoding: ResultChunkEncoding,
  chunkSize: number,
): AsyncGenerator<ResultChunkRow> {
  let seq = 0;
  /** Each chunk waits for the next (or the end) to learn whether it is the last. */
  let held: string | undefined;
  let buffer: Buffer = Buffer.alloc(0);
  const utf8 = encoding === 'utf8';

  const row = (data: string, more: boolean): ResultChunkRow => ({
    type: RESULT_CHUNK_TYPE,
    result_id: resultId,
    chunk_seq: seq++,
    data,
    encoding,
    more,
  });

  const pieces: AsyncIterable<ResultChunkPiece> | Iterable<ResultChunkPiece> = isPiece(source) ? [source] : source;
  for await (const piece of pieces) {
    const bytes = toBuffer(piece);
    if (bytes.length === 0) continue;
    buffer = buffer.length === 0 ? bytes : Buffer.concat([buffer, bytes]);
    let start = 0;
    // Keep the tail (< chunkSize, or an incomplete character) for the next piece.
    while (buffer.length - start >= chunkSize) {
      const end = utf8 ? utf8Boundary(buffer, start, chunkSize) : start + chunkSize;
      if (utf8 && end === buffer.length && !endsOnCharacter(buffer)) break;
      if (held !== undefined) yield row(held, true);
      held = utf8 ? buffer.toString('utf8', start, end) : buffer.toString('base64', start, end);
      start = end;
    }
    // Copy the tail out: a slice would keep the whole (possibly large) piece alive.
    buffer = start === 0 ? buffer : Buffer.from(buffer.subarray(start));
  }
  if (buffer.length > 0) {
    if (held !== undefined) yield row(held, true);
    held = utf8 ? buffer.toString('utf8') : buffer.toString('base64');
  }
  yield row(held ?? '', false);
}

/** False when the buffer ends inside a multi-byte character (more bytes may follow in the next piece). */
function endsOnCharacter(buffer: Buffer): boolean {
  let i = buffer.length - 1;
  let continuation = 0;
  while (i >= 0 && (buffer[i] & 0xc0) === 0x80 && continuation < 3) {
    i--;
    continuation++;
  }
  if (i < 0) return true;
  const lead = buffer[i];
  const expected = lead < 0x80 ? 0 : (lead & 0xe0) === 0xc0 ? 1 : (lead & 0xf0) === 0xe0 ? 2 : (lead & 0xf8) === 0xf0 ? 3 : 0;
  return continuation >= expected;
}
