// `@nest-jsonrpc/server/testing`: call an app built with `Test.createTestingModule(...)` over its
// real routes. The error classes are the client's, re-exported so a test needs one import.
export { createRpcTestClient, RpcTestClient, type RpcTestClientOptions, type McpCallToolResult } from './rpc-test-client.js';
export {
  JsonRpcError,
  JsonRpcTransportError,
  JsonRpcTimeoutError,
  JsonRpcStreamTruncatedError,
  JsonRpcProtocolError,
  JsonRpcResponseTooLargeError,
  ResultChunkError,
  type JsonRpcStream,
  type DurableStreamAttachment,
  type DurableStreamEvent,
  type BatchEntry,
  type BatchSettledResult,
  type CallOptions,
  type StreamCallOptions,
  type AttachOptions,
  type JsonRpcParams,
} from '@nest-jsonrpc/client';
