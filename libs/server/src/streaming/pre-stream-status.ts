import { RpcErrorCode } from '../protocol/error-codes.js';
import { httpStatusForCode } from '../protocol/http-status.js';

/**
 * HTTP status of an error answered before a stream starts (DESIGN §4). Unlike `/rpc` this is not
 * optional: a streaming client must learn from the status that no stream follows. As in §4, a
 * rate limit is 400 (with `Retry-After`), not 429; every other code maps as `httpStatusForCode`.
 * A body over the size limit (413) never reaches the dispatcher.
 */
export function preStreamHttpStatus(code: number): number {
  return code === RpcErrorCode.RateLimitExceeded ? 400 : httpStatusForCode(code);
}
