import { RpcContext } from '../context/rpc-context.js';

/**
 * The context a durable stream's producer runs with (`transport: 'durable'`): the starting call's,
 * except that `signal` belongs to the stream (aborted by `DELETE <path>/:id` or shutdown), not to
 * the HTTP request that started it — that request is answered long before the producer finishes.
 */
export class DurableRpcContext<TUser = any> extends RpcContext<TUser> {
  constructor(
    base: RpcContext<TUser>,
    /** The durable stream this producer feeds. */
    readonly streamId: string,
    streamSignal: AbortSignal,
  ) {
    super(base.method, base.id, base.params, base.isNotification, 'durable', base.exchange, base.argsResolver, streamSignal);
  }
}
