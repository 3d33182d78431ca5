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
}

export const RATE_LIMIT_KEYS = ['limit', 'interval', 'scope', 'blockDuration'];
export const RATE_LIMIT_SCOPES = ['global', 'user', 'ip'];

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
  return problems.size === before;
}

/** The `rateLimit` option, checked and frozen; undefined when unset (methods without `@RpcRateLimit` are not limited). */
export function resolveRateLimitOptions(value: JsonRpcRateLimitOptions | undefined, problems: OptionProblems): Readonly<JsonRpcRateLimitOptions> | undefined {
  const label = (key?: string) => (key === undefined ? '"rateLimit"' : `"rateLimit.${key}"`);
  return checkRateLimitShape(value, label, (key) => `unknown option "rateLimit.${key}"`, problems) ? Object.freeze({ ...value }) : undefined;
}
