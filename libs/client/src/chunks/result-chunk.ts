/** The chunked-result row (DESIGN §4) and its guard, from the shared protocol package. */
export { isResultChunk, type ResultChunkRow } from '@nest-jsonrpc/protocol';
