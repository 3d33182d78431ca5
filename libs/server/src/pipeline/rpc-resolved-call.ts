import type { RpcId } from '@nest-jsonrpc/protocol';
import type { RpcContext } from '../context/rpc-context.js';
import type { RpcMethodDefinition } from '../registry/rpc-method-definition.js';
import type { RpcMethodInvoker } from './rpc-method-invoker.js';

/**
 * A call the pipeline found a method for: its context, ready to run. Its own file so that what
 * runs a call (`rpc-pipeline.ts`) and what observes one (`rpc-call-observer.ts`) both import it
 * and neither imports the other.
 */
export interface RpcResolvedCall {
  readonly ctx: RpcContext;
  readonly definition: RpcMethodDefinition;
  /** The id to answer with (null for a notification). */
  readonly id: RpcId;
  /** @internal */
  readonly invoker: RpcMethodInvoker;
  readonly error?: undefined;
}
