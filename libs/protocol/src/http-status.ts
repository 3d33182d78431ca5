import { RpcErrorCode } from './error-codes.js';

/**
 * HTTP status for an error code when `httpStatus.enabled` is on (README.md, "HTTP"). Codes we do not know
 * are the application's own: -32000..-32099 are "server error" in the spec, so 500; anything
 * else is a domain error the caller caused, so 400.
 */
export function httpStatusForCode(code: number): number {
  switch (code) {
    case RpcErrorCode.ParseError:
    case RpcErrorCode.InvalidRequest:
    case RpcErrorCode.InvalidParams:
    case RpcErrorCode.AccessDenied:
      return 400;
    case RpcErrorCode.MethodNotFound:
    case RpcErrorCode.NotFound:
      return 404;
    case RpcErrorCode.RateLimitExceeded:
      return 429;
    case RpcErrorCode.InternalError:
      return 500;
    default:
      return code <= -32000 && code >= -32099 ? 500 : 400;
  }
}

/**
 * HTTP status of an error answered before a stream starts (docs/streaming.md, "Errors"). Unlike `/rpc` this is not
 * optional: a streaming client must learn from the status that no stream follows. As that table says, a
 * rate limit is 400 (with `Retry-After`), not 429; every other code maps as `httpStatusForCode`.
 */
export function preStreamHttpStatus(code: number): number {
  return code === RpcErrorCode.RateLimitExceeded ? 400 : httpStatusForCode(code);
}
