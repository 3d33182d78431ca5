import type { ResolvedJsonRpcOptions } from '../options/json-rpc-options.js';

/**
 * What bounds a request body, of the resolved options: its size, and how long it may take
 * (`limits.bodyTimeoutMs`). The platform adapters enforce them; the reply writer names them in
 * refusals and lingers by `limits`.
 */
export type BodyBounds = Pick<ResolvedJsonRpcOptions, 'maxRequestSize' | 'limits'>;

/** The platforms' body limit for `maxRequestSize` (0 turns the limit off). */
export function bodyLimitOf(maxRequestSize: number): number {
  return maxRequestSize === 0 ? Number.MAX_SAFE_INTEGER : maxRequestSize;
}
