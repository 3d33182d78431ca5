import { RpcContext } from '../dispatch/rpc-context.js';

/**
 * The context a durable stream's producer runs with: the starting call's context, except that
 * `signal` belongs to the stream (aborted by `DELETE <path>/:id` or shutdown), not to the HTTP
 * request that started it — that request is answered long before the producer finishes.
 */
export class DurableRpcContext extends RpcContext {
  constructor(
    base: RpcContext,
    /** The durable stream this producer feeds. */
    readonly streamId: string,
    private readonly streamSignal: AbortSignal,
  ) {
    super(base.paramPlan, base.method, base.id, base.params, base.isNotification, base.exchange);
  }

  override get signal(): AbortSignal {
    return this.streamSignal;
  }
}
