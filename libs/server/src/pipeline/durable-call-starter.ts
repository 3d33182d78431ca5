import type { DurableStartAnswer } from '@nest-jsonrpc/protocol';
import type { RpcResolvedCall } from './rpc-pipeline.js';

/**
 * What `/rpc` and `/rpc/stream` hand a durable stream method to (implemented by `durable/`, given
 * to the routes at bootstrap): the routes sit below the durable runner and never import it.
 */
export interface DurableCallStarter {
  /** `POST <path>`: start in the background, answer the start envelope. */
  start(call: RpcResolvedCall): Promise<DurableStartAnswer>;
  /** `POST <stream.path>`: start, then serve the stream's committed events live as rows. */
  startLive(call: RpcResolvedCall): Promise<{ streamId: string; rows: AsyncIterable<unknown> }>;
}
