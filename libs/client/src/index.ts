export {
  JsonRpcClient,
  type JsonRpcClientOptions,
  type CallOptions,
  type StreamCallOptions,
  type BatchEntry,
  type BatchSettledResult,
  type DurableStreamSummary,
  type DurableStreamList,
  type DurableEventsPage,
  type DurableCancelAnswer,
  type HeadersSource,
} from './client/json-rpc-client.js';
export { JsonRpcStream, type CollectResultOptions } from './client/json-rpc-stream.js';
export {
  DurableStreamAttachment,
  type DurableStreamEvent,
  type AttachOptions,
  type ReconnectOptions,
} from './client/durable-stream-attachment.js';
export {
  JsonRpcError,
  JsonRpcTransportError,
  JsonRpcTimeoutError,
  JsonRpcStreamTruncatedError,
  JsonRpcProtocolError,
  JsonRpcResponseTooLargeError,
  ResultChunkError,
  type JsonRpcErrorObject,
  type JsonRpcId,
} from './errors/client-errors.js';
export { ResultChunkAssembler, type ResultChunkAssemblerOptions } from './chunks/result-chunk-assembler.js';
export { isResultChunk, type ResultChunkRow } from './chunks/result-chunk.js';
export { decodeBase64Strict } from './chunks/strict-base64.js';
export { NdjsonFrameDecoder } from './decoding/ndjson-decoder.js';
export { SseFrameDecoder, SseEventDecoder, type SseEvent } from './decoding/sse-decoder.js';
export { JsonArrayFrameDecoder } from './decoding/json-array-decoder.js';
export { decoderForContentType, STREAM_MEDIA_TYPES } from './decoding/decoder-for-content-type.js';
export type { StreamFrame, StreamFrameDecoder, StreamDecoderOptions, StreamEndReason } from './decoding/stream-frame.js';
export type { JsonRpcParams } from './protocol/json-rpc-envelope.js';
