/**
 * `result_chunk` rows (docs/streaming.md, "Chunked results"): a large result (a file, a long text) sent as a sequence of
 * stream rows that a client reassembles.
 */
export type ResultChunkEncoding = 'utf8' | 'base64';

export interface ResultChunkRow {
  readonly type: 'result_chunk';
  readonly result_id: string;
  /** From 0, per result. */
  readonly chunk_seq: number;
  readonly data: string;
  readonly encoding: ResultChunkEncoding;
  /** False on the last chunk only. */
  readonly more: boolean;
}

export const RESULT_CHUNK_TYPE = 'result_chunk';

/** True when a stream row is a `result_chunk` row (by its `type`; an assembler checks the rest). */
export function isResultChunk(row: unknown): row is ResultChunkRow {
  return row !== null && typeof row === 'object' && (row as { type?: unknown }).type === RESULT_CHUNK_TYPE;
}
