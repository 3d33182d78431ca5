/**
 * A result already in JSON form (a cache hit, or a fresh result that was just stored): the
 * reply writer puts `json` in the `result` member without serialising again.
 */
export class RpcSerializedResult {
  constructor(readonly json: string) {}
}
