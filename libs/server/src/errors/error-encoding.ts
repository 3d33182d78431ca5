import type { RpcErrorObject } from '@nest-jsonrpc/protocol';
import type { RpcExceptionMapper } from './rpc-exception-mapper.js';

/** An error as it went on the wire: its text, and the error object it carries. */
export interface EncodedError<T> {
  readonly encoded: T;
  readonly error: RpcErrorObject;
}

/**
 * The one "encode the error, or fall back to -32603": `encode(error)` (an envelope, a stream's
 * error frame, a durable `error` event), or — when JSON cannot carry it (a code that is not an
 * integer, `data` with a BigInt or a cycle) — `encode` of the -32603 the mapper makes of that
 * failure (and logs). Whatever an error carries, the client gets a well-formed answer.
 */
export function encodeOrInternal<T>(
  mapper: RpcExceptionMapper,
  error: RpcErrorObject,
  method: string | undefined,
  encode: (error: RpcErrorObject) => T,
): EncodedError<T> {
  try {
    return { encoded: encode(error), error };
  } catch (serializationError) {
    const internal = mapper.toErrorObject(serializationError, method);
    return { encoded: encode(internal), error: internal };
  }
}
