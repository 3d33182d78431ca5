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

/**
 * The last step of a durable start, after the handler: records the stream (claiming its slot under
 * `durable.maxRunning`) or throws. Implemented by `durable/` and set once at bootstrap
 * (`RpcPipeline.claimDurableStartsWith`), as the observer is: the claim runs inside the observed
 * call, so a start refused after its handler ran is observed as the failed call it is, not as a
 * success followed by an error — and no call hands the pipeline a callback.
 */
export interface DurableStartClaim {
  /** `value` is the handler's value as the pipeline returns it; resolves once the stream is recorded. */
  claim(call: RpcResolvedCall, value: unknown): Promise<void>;
}
