import secureJson from 'secure-json-parse';

/** Sentinel for a body that is not JSON; a value, not an exception, because it is common input. */
export const NOT_JSON: unique symbol = Symbol('not-json');

/**
 * Parses a request body. `__proto__` and `constructor.prototype` keys are dropped so nothing
 * downstream (class-transformer, spreads, user code) can be tricked into prototype pollution.
 * A leading BOM is tolerated. Empty or malformed text yields NOT_JSON.
 */
export function parseJsonText(text: string | undefined): unknown {
  if (text === undefined || text.length === 0) return NOT_JSON;
  try {
    return secureJson.parse(text, undefined, { protoAction: 'remove', constructorAction: 'remove' });
  } catch {
    return NOT_JSON;
  }
}
