import secureJson from 'secure-json-parse';
import { RpcErrorCode, RpcErrorMessage, type RpcErrorObject } from '@nest-jsonrpc/protocol';

/** Sentinel for a body that is not JSON; a value, not an exception, because it is common input. */
export const NOT_JSON: unique symbol = Symbol('not-json');

const DROP_PROTOTYPE_KEYS = Object.freeze({ protoAction: 'remove', constructorAction: 'remove' } as const);

/**
 * Parses a request body. `__proto__` and `constructor.prototype` keys are dropped so nothing
 * downstream (class-transformer, spreads, user code) can be tricked into prototype pollution.
 * A leading BOM is tolerated. Empty or malformed text yields NOT_JSON.
 */
export function parseJsonText(text: string | undefined): unknown {
  if (text === undefined || text.length === 0) return NOT_JSON;
  try {
    return secureJson.parse(text, undefined, DROP_PROTOTYPE_KEYS);
  } catch {
    return NOT_JSON;
  }
}

/** The answer to a body that is not JSON, on every route that reads one: -32700 "Parse error". */
export const PARSE_ERROR: RpcErrorObject = Object.freeze({ code: RpcErrorCode.ParseError, message: RpcErrorMessage[RpcErrorCode.ParseError] });
