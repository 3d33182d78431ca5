/**
 * A result already in JSON form (a cache hit, or a fresh result that was just stored): the
 * dispatcher writes `json` as the `result` member without serialising again.
 */
export class RpcSerializedResult {
  constructor(readonly json: string) {}
}
