/** The chunked-result row (docs/streaming.md, "Chunked results") and its guard, from the shared protocol package. */
export { isResultChunk, type ResultChunkRow } from '@nest-jsonrpc/protocol';
