import { Injectable, Module } from '@nestjs/common';
import { IsNumber } from 'class-validator';
import {
  JsonRpcModule,
  MemoryStreamStore,
  RpcMethod,
  RpcParams,
  RpcStream,
  StreamFormat,
  type RpcContext,
} from '@nest-jsonrpc/server';

/**
 * What an internal failure carries and must never reach a client: a message with a path and a
 * marker, and (by being an Error) a stack.
 */
export const INTERNAL_SECRET = 'fuzz-internal-secret /srv/app/src/secret.ts:12:7';

class AddParams {
  @IsNumber() a!: number;
  @IsNumber() b!: number;
}

type FeedParams = { rows?: unknown; fail?: unknown } | unknown[] | undefined;

/** Up to 3 rows echoing the params, then (with `fail`) an internal error. */
async function* feed(params: FeedParams) {
  const p = (params && !Array.isArray(params) ? params : {}) as { rows?: unknown; fail?: unknown };
  const rows = typeof p.rows === 'number' && p.rows >= 0 ? Math.min(3, Math.floor(p.rows)) : 1;
  for (let i = 0; i < rows; i++) yield { i, params };
  if (p.fail) throw new Error(INTERNAL_SECRET);
}

@Injectable()
class FuzzedMethods {
  @RpcMethod('math.add')
  add(@RpcParams() { a, b }: AddParams) {
    return { sum: a + b };
  }

  /** Whatever arrived goes back out: deep nesting, huge numbers, __proto__ keys, lone surrogates. */
  @RpcMethod('echo')
  echo(params: unknown) {
    return params ?? null;
  }

  @RpcMethod('boom')
  boom(): never {
    throw new Error(INTERNAL_SECRET);
  }

  @RpcMethod('feed.ndjson')
  @RpcStream({ format: StreamFormat.Ndjson })
  ndjson(params: FeedParams) {
    return feed(params);
  }

  @RpcMethod('feed.sse')
  @RpcStream({ format: StreamFormat.Sse })
  sse(params: FeedParams) {
    return feed(params);
  }

  @RpcMethod('feed.array')
  @RpcStream({ format: StreamFormat.JsonArray })
  array(params: FeedParams) {
    return feed(params);
  }

  @RpcMethod('jobs.durable')
  @RpcStream({ durable: true })
  durable(params: FeedParams, _ctx: RpcContext) {
    return feed(params);
  }
}

export const FUZZED_METHODS = ['math.add', 'echo', 'boom', 'feed.ndjson', 'feed.sse', 'feed.array', 'jobs.durable'];
export const STREAM_METHODS = ['feed.ndjson', 'feed.sse', 'feed.array', 'jobs.durable'];

/** Every route the fuzzers hit: `/rpc`, `/rpc/stream` (POST, and GET for SSE) and the durable routes. */
@Module({
  imports: [JsonRpcModule.forRoot({ stream: { enabled: true }, durable: { enabled: true, store: new MemoryStreamStore() } })],
  providers: [FuzzedMethods],
})
export class FuzzModule {}
