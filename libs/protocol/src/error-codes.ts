/**
 * The JSON-RPC 2.0 error vocabulary (spec §5.1) plus the server-defined codes this module uses.
 * Pure data: shared by the server, the client and the docs.
 */
export const RpcErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  AccessDenied: -32001,
  NotFound: -32002,
  RateLimitExceeded: -32003,
} as const;

export type RpcErrorCodeValue = (typeof RpcErrorCode)[keyof typeof RpcErrorCode];

/** The messages the spec gives each code; a precise reason may follow after `: `. */
export const RpcErrorMessage: Readonly<Record<number, string>> = Object.freeze({
  [RpcErrorCode.ParseError]: 'Parse error',
  [RpcErrorCode.InvalidRequest]: 'Invalid Request',
  [RpcErrorCode.MethodNotFound]: 'Method not found',
  [RpcErrorCode.InvalidParams]: 'Invalid params',
  [RpcErrorCode.InternalError]: 'Internal error',
  [RpcErrorCode.AccessDenied]: 'Access denied',
  [RpcErrorCode.NotFound]: 'Not found',
  [RpcErrorCode.RateLimitExceeded]: 'Rate limit exceeded',
});

/**
 * Whether `code` may be sent as an error code: JSON-RPC requires an integer. Safe integers only,
 * so the JSON text is plain digits (`1e+21` is an integer to JavaScript, but not to every peer).
 * Both ends apply this one rule: the server never writes anything else, the client accepts
 * nothing else.
 */
export function isRpcErrorCode(code: unknown): code is number {
  return Number.isSafeInteger(code);
}
