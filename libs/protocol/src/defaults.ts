/** Default routes (README.md, "Options"). */
export const DEFAULT_PATHS = Object.freeze({
  rpc: '/rpc',
  stream: '/rpc/stream',
  durable: '/rpc/streams',
  openrpc: '/rpc/openrpc.json',
  explorer: '/rpc/explorer',
  mcp: '/mcp',
});

/** Header names both ends use, lower case (as Node gives them). */
export const RpcHeader = Object.freeze({
  /** Echoed (or generated) per HTTP request; shared by a batch's items. */
  RequestId: 'x-request-id',
  /** The durable stream served live on the stream route. */
  StreamId: 'x-stream-id',
  /** Seconds, with -32003. */
  RetryAfter: 'retry-after',
  /** SSE resume cursor. */
  LastEventId: 'last-event-id',
  /** `true` when a deprecated method was called. */
  Deprecation: 'deprecation',
  /** `<method>: <reason>` of each deprecated method called. */
  RpcDeprecated: 'x-rpc-deprecated',
});

/** Media types accepted as a JSON-RPC request body. */
export const JSON_RPC_REQUEST_MEDIA_TYPES: readonly string[] = Object.freeze(['application/json', 'application/json-rpc', 'application/jsonrequest']);

/** The Content-Type of every JSON answer. */
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';
