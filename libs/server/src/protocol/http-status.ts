import { RpcErrorCode } from './error-codes.js';

/**
 * HTTP status for an error code when `httpStatus.enabled` is on (DESIGN §4). Codes we do not know
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
