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
  const keys = Object.keys(value);
  // Most clients send keys in one order every time; sort only when they are not already sorted.
  for (let i = 1; i < keys.length; i++) {
    if (keys[i - 1] > keys[i]) {
      keys.sort();
      break;
    }
  }
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

/** Params whose stable JSON is at most this long are keyed by that JSON itself: hashing costs more than it saves. */
const INLINE_MAX = 96;

/**
 * A stable, unambiguous digest of a call's params: their stable JSON when short (starts with
 * `{`, `[` or a literal), else `#` + its SHA-256. Absent params give `-`, distinct from `{}` and `[]`.
 */
export function paramsHash(params: unknown): string {
  if (params === undefined) return '-';
  const json = stableJson(params);
  return json.length <= INLINE_MAX ? json : `#${createHash('sha256').update(json).digest('base64url')}`;
}
