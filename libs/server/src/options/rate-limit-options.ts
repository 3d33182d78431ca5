import type { OptionProblems } from './option-checks.js';

/** The module's default rate limit: what `@RpcRateLimit` says, for every method that says nothing. */
export interface JsonRpcRateLimitOptions {
  /** Calls allowed per `interval`, per method. */
  limit: number;
  /** Window length in seconds. */
  interval: number;
  /** Who shares a method's counter: everyone, each user, or each client IP. Default `'ip'`. */
  scope?: 'global' | 'user' | 'ip';
  /** Seconds a caller stays blocked once over the limit. Default 0. */
  blockDuration?: number;
  /**
   * When the shared counters cannot be reached (the `redis` option's Redis is down): `'allow'`
   * (default) lets limited calls through uncounted, `'deny'` refuses them with -32603. Applies to
   * every limited method that does not say otherwise in its `@RpcRateLimit`. Given alone
   * (`rateLimit: { onStoreError: 'deny' }`) it sets the policy without a default limit.
   */
  onStoreError?: 'allow' | 'deny';
}

/** `rateLimit` without a default limit: only what limited calls do while the counters cannot be reached. */
export interface JsonRpcRateLimitPolicy {
  onStoreError: 'allow' | 'deny';
}

/** Every key of `JsonRpcRateLimitOptions`, each once: a key added to the interface and not here fails to compile. */
const RATE_LIMIT_FIELDS: { readonly [K in keyof Required<JsonRpcRateLimitOptions>]-?: true } = {
  limit: true,
  interval: true,
  scope: true,
  blockDuration: true,
  onStoreError: true,
};
const RATE_LIMIT_KEYS = Object.keys(RATE_LIMIT_FIELDS);
export const RATE_LIMIT_SCOPES = ['global', 'user', 'ip'];
export const STORE_ERROR_POLICIES = ['allow', 'deny'];

/**
 * Checks a rate limit's shape — the module's `rateLimit` option and each `@RpcRateLimit` alike.
 * `label(key)` names a field in messages, `label()` the whole; `unknownKey` says a key is not one.
 */
export function checkRateLimitShape(
  value: unknown,
  label: (key?: string) => string,
  unknownKey: (key: string) => string,
  problems: OptionProblems,
): value is JsonRpcRateLimitOptions {
  if (value === undefined) return false;
  if (!problems.object(label(), value, RATE_LIMIT_KEYS, unknownKey)) return false;
  const o = value as JsonRpcRateLimitOptions;
  const before = problems.size;
  problems.integer(label('limit'), o.limit, 1);
  problems.positiveNumber(label('interval'), o.interval, ' of seconds');
  problems.oneOf(label('scope'), o.scope, RATE_LIMIT_SCOPES);
  if (o.blockDuration !== undefined && !(typeof o.blockDuration === 'number' && o.blockDuration >= 0)) {
    problems.push(`${label('blockDuration')} must be a number of seconds >= 0`);
  }
  problems.oneOf(label('onStoreError'), o.onStoreError, STORE_ERROR_POLICIES);
  return problems.size === before;
}

/**
 * The `rateLimit` option, checked: the default limit (frozen; undefined when unset — methods
 * without `@RpcRateLimit` are then not limited) and the store-error policy (default `'allow'`).
 */
export function resolveRateLimitOptions(
  value: JsonRpcRateLimitOptions | JsonRpcRateLimitPolicy | undefined,
  problems: OptionProblems,
): { rateLimit: Readonly<JsonRpcRateLimitOptions> | undefined; onStoreError: 'allow' | 'deny' } {
  const label = (key?: string) => (key === undefined ? '"rateLimit"' : `"rateLimit.${key}"`);
  const policyOnly = value !== null && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 1 && 'onStoreError' in value;
  if (policyOnly) {
    problems.oneOf(label('onStoreError'), value.onStoreError, STORE_ERROR_POLICIES);
    return { rateLimit: undefined, onStoreError: value.onStoreError ?? 'allow' };
  }
  const ok = checkRateLimitShape(value, label, (key) => `unknown option "rateLimit.${key}"`, problems);
  return { rateLimit: ok ? Object.freeze({ ...(value as JsonRpcRateLimitOptions) }) : undefined, onStoreError: (ok && value!.onStoreError) || 'allow' };
}
