/**
 * A row a durable stream handler wants delivered as `event: progress` instead of `event: chunk`:
 * `yield progress({ percent: 40 })`.
 */
export class RpcProgress<T = unknown> {
  constructor(readonly value: T) {}
}

/** Wraps a row so a durable stream stores and sends it as a `progress` event. */
export function progress<T>(value: T): RpcProgress<T> {
  return new RpcProgress(value);
}
