/**
 * A result already in JSON form (a cache hit, or a fresh result that was just stored): the
 * reply writer puts `json` in the `result` member without serialising again.
 */
export class RpcSerializedResult {
  constructor(readonly json: string) {}
}

/** A call's value as a value: a serialized result's JSON text read back, anything else as is. */
export function plainResult(value: unknown): unknown {
  return value instanceof RpcSerializedResult ? JSON.parse(value.json) : value;
}
