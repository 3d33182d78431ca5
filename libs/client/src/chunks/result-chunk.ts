/** A chunked-result stream row (DESIGN §4). */
export interface ResultChunkRow {
  type: 'result_chunk';
  result_id: string;
  chunk_seq: number;
  data: string;
  encoding: 'utf8' | 'base64';
  more: boolean;
}

/** True when a stream row is a `result_chunk` row (by its `type`; the assembler checks the rest). */
export function isResultChunk(row: unknown): row is ResultChunkRow {
  return row !== null && typeof row === 'object' && (row as { type?: unknown }).type === 'result_chunk';
}
