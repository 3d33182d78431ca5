import type { RpcContext } from '../context/rpc-context.js';
import { RPC_CACHE_METADATA } from './metadata-keys.js';

/** Who may be served an entry: everyone, the same user, the same client IP, or a key you compute. */
export type RpcCacheScope = 'global' | 'user' | 'ip' | ((ctx: RpcContext) => string);

export interface RpcCacheOptions {
  /** Seconds an entry lives. */
  ttl: number;
  /** Default `'global'`: one entry per params for every caller. */
  scope?: RpcCacheScope;
  /** Labels for `RpcCacheInvalidator.purgeTags()`. */
  tags?: readonly string[];
}

/**
 * Caches the method's result per method, scope and params (key order does not matter). Hits
 * still pass roles, guards and rate limits; errors and notifications are never stored.
 */
export function RpcCache(options: RpcCacheOptions): MethodDecorator {
  return (_target, _key, descriptor) => {
    Reflect.defineMetadata(RPC_CACHE_METADATA, { ...options }, descriptor.value as object);
    return descriptor;
  };
}
