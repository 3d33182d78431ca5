import { ResultChunkError } from '../errors/client-errors.js';
import { concatBytes } from '../decoding/stream-frame.js';
import type { ResultChunkRow } from './result-chunk.js';
import { decodeBase64Strict } from './strict-base64.js';

export interface ResultChunkAssemblerOptions {
  /** Most decoded bytes one result may reach; a chunk that would pass it is refused. Default 64 MiB. */
  maxBytes?: number;
}

export const DEFAULT_MAX_RESULT_BYTES = 64 * 1024 * 1024;

interface StoredChunk {
  /** The wire `data`, kept to tell an identical duplicate from a conflicting one. */
  readonly data: string;
  readonly more: boolean;
  readonly bytes: Uint8Array | undefined; // base64 chunks, decoded on arrival
}

interface PendingResult {
  readonly encoding: 'utf8' | 'base64';
  readonly chunks: Map<number, StoredChunk>;
  finalSeq: number;
  highestSeq: number;
  bytes: number;
}

const utf8Encoder = new TextEncoder();

/**
 * Reassembles `result_chunk` rows (docs/streaming.md, "Chunked results") into whole results. Chunks may arrive in any order;
 * an identical duplicate is ignored. Whatever can be known wrong on arrival (a conflicting
 * duplicate, a chunk after the final one, a second final chunk, mixed encodings, bad base64, a
 * result over `maxBytes`, a malformed row) throws from `push`; an unknown or incomplete result
 * throws from `assemble`. Every error is a ResultChunkError naming `result_id` and `chunk_seq`.
 */
export class ResultChunkAssembler {
  private readonly maxBytes: number;
  private readonly results = new Map<string, PendingResult>();

  constructor(options: ResultChunkAssemblerOptions = {}) {
    this.maxBytes = options.maxBytes ?? DEFAULT_MAX_RESULT_BYTES;
  }

  /** Adds one row. Throws ResultChunkError when the row is malformed or contradicts earlier rows. */
  push(chunk: ResultChunkRow): void {
    const { result_id: id, chunk_seq: seq, data, encoding, more } = validate(chunk);
    const known = this.results.get(id);
    // A new result is only recorded once its first chunk has passed every check below.
    const result: PendingResult = known ?? { encoding, chunks: new Map(), finalSeq: -1, highestSeq: -1, bytes: 0 };
    if (result.encoding !== encoding) {
      throw new ResultChunkError(`encoding "${encoding}" differs from the result's "${result.encoding}"`, id, seq);
    }
    const seen = result.chunks.get(seq);
    if (seen !== undefined) {
      if (seen.data === data && seen.more === more) return;
      throw new ResultChunkError('conflicting duplicate: this chunk_seq arrived before with other data or `more`', id, seq);
    }
    if (result.finalSeq !== -1 && seq > result.finalSeq) {
      throw new ResultChunkError(`chunk after the final one (chunk_seq ${result.finalSeq} had more: false)`, id, seq);
    }
    if (!more) {
      if (result.finalSeq !== -1) {
        throw new ResultChunkError(`second final chunk (chunk_seq ${result.finalSeq} already had more: false)`, id, seq);
      }
      if (result.highestSeq > seq) {
        throw new ResultChunkError(`final chunk, but chunk_seq ${result.highestSeq} came after it`, id, seq);
      }
    }
    let bytes: Uint8Array | undefined;
    let size: number;
    if (encoding === 'base64') {
      try {
        bytes = decodeBase64Strict(data);
      } catch (cause) {
        throw new ResultChunkError(`bad base64: ${(cause as Error).message}`, id, seq);
      }
      size = bytes.length;
    } else {
      size = utf8ByteLength(data);
    }
    if (result.bytes + size > this.maxBytes) {
      throw new ResultChunkError(`result exceeds maxBytes (${this.maxBytes} bytes)`, id, seq);
    }
    result.bytes += size;
    result.chunks.set(seq, { data, more, bytes });
    if (seq > result.highestSeq) result.highestSeq = seq;
    if (!more) result.finalSeq = seq;
    if (known === undefined) this.results.set(id, result);
  }

  /** True when the final chunk and every chunk before it have arrived. */
  isComplete(resultId: string): boolean {
    const result = this.results.get(resultId);
    return result !== undefined && result.finalSeq !== -1 && result.chunks.size === result.finalSeq + 1;
  }

  /** The result ids seen so far, in order of first arrival. */
  resultIds(): string[] {
    return [...this.results.keys()];
  }

  /** The whole result as bytes (utf8 chunks UTF-8 encoded). Throws when unknown or incomplete. */
  assemble(resultId: string): Uint8Array {
    const result = this.complete(resultId);
    const parts: Uint8Array[] = [];
    for (let seq = 0; seq <= result.finalSeq; seq++) {
      const chunk = result.chunks.get(seq)!;
      parts.push(chunk.bytes ?? utf8Encoder.encode(chunk.data));
    }
    return parts.length === 0 ? new Uint8Array(0) : concatBytes(parts, result.bytes);
  }

  /** The whole result as text (base64 results decoded as strict UTF-8). Throws when unknown or incomplete. */
  assembleText(resultId: string): string {
    const result = this.complete(resultId);
    if (result.encoding === 'utf8') {
      let text = '';
      for (let seq = 0; seq <= result.finalSeq; seq++) text += result.chunks.get(seq)!.data;
      return text;
    }
    try {
      return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(this.assemble(resultId));
    } catch (cause) {
      if (cause instanceof ResultChunkError) throw cause;
      throw new ResultChunkError('result is not valid UTF-8 text', resultId, undefined);
    }
  }

  /** Forgets a result (e.g. once assembled), freeing its memory. */
  delete(resultId: string): boolean {
    return this.results.delete(resultId);
  }

  private complete(resultId: string): PendingResult {
    const result = this.results.get(resultId);
    if (result === undefined) throw new ResultChunkError('unknown result: no chunk of it has arrived', resultId, undefined);
    if (result.finalSeq === -1) {
      throw new ResultChunkError(
        `incomplete result: the final chunk (more: false) has not arrived; highest chunk so far`,
        resultId,
        result.highestSeq,
      );
    }
    for (let seq = 0; seq < result.finalSeq; seq++) {
      if (!result.chunks.has(seq)) throw new ResultChunkError('incomplete result: missing chunk', resultId, seq);
    }
    return result;
  }
}

function validate(chunk: unknown): ResultChunkRow {
  const c = chunk as Partial<ResultChunkRow> | null;
  const id = c !== null && typeof c === 'object' && typeof c.result_id === 'string' ? c.result_id : undefined;
  const seq = c !== null && typeof c === 'object' && typeof c.chunk_seq === 'number' ? c.chunk_seq : undefined;
  const problem =
    c === null || typeof c !== 'object' ? 'not an object'
    : c.type !== 'result_chunk' ? '`type` is not "result_chunk"'
    : id === undefined || id === '' ? '`result_id` is not a non-empty string'
    : seq === undefined || !Number.isSafeInteger(seq) || seq < 0 ? '`chunk_seq` is not a non-negative integer'
    : typeof c.data !== 'string' ? '`data` is not a string'
    : c.encoding !== 'utf8' && c.encoding !== 'base64' ? '`encoding` is not "utf8" or "base64"'
    : typeof c.more !== 'boolean' ? '`more` is not a boolean'
    : undefined;
  if (problem !== undefined) throw new ResultChunkError(`malformed result_chunk row: ${problem}`, id, seq);
  return c as ResultChunkRow;
}

/** UTF-8 length of a string without encoding it. */
function utf8ByteLength(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) bytes += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 2; // a surrogate pair: 2 UTF-16 units, 4 bytes
      i++;
    } else bytes += 2;
  }
  return bytes;
}
