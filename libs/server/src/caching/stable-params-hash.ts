import { createHash } from 'node:crypto';

/**
 * JSON with object keys sorted at every depth, so `{"a":1,"b":2}` and `{"b":2,"a":1}` give the
 * same text. Params come from JSON.parse, so only JSON values occur. Hand-written (a dozen lines)
 * rather than a dependency, because it also has to be fast on the hot path.
 */
export function stableJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i ? ',' : '') + stableJson(value[i]);
    return out + ']';
  }
  const keys = Object.keys(value).sort();
  let out = '{';
  let first = true;
  for (const key of keys) {
    const item = (value as Record<string, unknown>)[key];
    if (item === undefined) continue;
    out += (first ? '' : ',') + JSON.stringify(key) + ':' + stableJson(item);
    first = false;
  }
  return out + '}';
}

/** A short stable digest of a call's params; absent params hash differently from `{}` and `[]`. */
export function paramsHash(params: unknown): string {
  if (params === undefined) return '-';
  return createHash('sha256').update(stableJson(params)).digest('base64url');
}
