import type { RpcContext } from '../context/rpc-context.js';

/**
 * Lifts `@RpcRateLimit` for a call, for example for internal callers. Provide it under
 * `RPC_RATE_LIMIT_BYPASS` anywhere in the app:
 * `{ provide: RPC_RATE_LIMIT_BYPASS, useClass: InternalCallers }`.
 */
export interface RpcRateLimitBypass {
  /** True lets the call through without counting it. Keep it cheap: it runs on every limited call. */
  bypassRateLimit(ctx: RpcContext): boolean | Promise<boolean>;
}

export const RPC_RATE_LIMIT_BYPASS = Symbol.for('nest-jsonrpc:rate-limit-bypass');
