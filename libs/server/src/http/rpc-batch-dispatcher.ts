import { RpcErrorCode, serializeBatch, type RpcErrorObject } from '@nest-jsonrpc/protocol';
import type { RpcHttpExchange } from '../context/rpc-context.js';
import type { ResolvedJsonRpcOptions } from '../options/json-rpc-options.js';
import type { DurableCallStarter } from '../pipeline/durable-call-starter.js';
import { isRejectedCall, type RpcPipeline, type RpcResolvedCall } from '../pipeline/rpc-pipeline.js';
import { isPromiseLike } from '../pipeline/stream-source.js';
import type { RpcReplyWriter } from './rpc-reply-writer.js';

/** One answered item: its JSON text, or undefined for a notification (which gets no answer). */
export type RpcItemAnswer = string | undefined;

/** What a dispatcher reads of the resolved options: the batch bounds, and the stream route it points stream calls to. */
export type BatchDispatchOptions = Pick<ResolvedJsonRpcOptions, 'maxBatchSize' | 'batchConcurrency' | 'stream'>;

const EMPTY_BATCH: RpcErrorObject = Object.freeze({ code: RpcErrorCode.InvalidRequest, message: 'Invalid Request' });

function invalidRequest(reason: string): RpcErrorObject {
  return { code: RpcErrorCode.InvalidRequest, message: `Invalid Request: ${reason}` };
}

/**
 * `POST <path>`: a parsed body (one request object or a batch) to the answer text. Each item is
 * one run of the pipeline; a batch runs its items with bounded concurrency and answers them in
 * request order. Synchronous handlers are answered without allocating a Promise. Never throws:
 * every failure becomes an error envelope.
 */
export class RpcBatchDispatcher {
  constructor(
    private readonly pipeline: RpcPipeline,
    private readonly writer: RpcReplyWriter,
    private readonly options: BatchDispatchOptions,
    private readonly durable: DurableCallStarter | undefined,
  ) {}

  dispatch(body: unknown, exchange: RpcHttpExchange): RpcItemAnswer | Promise<RpcItemAnswer> {
    if (!Array.isArray(body)) return this.dispatchItem(body, exchange);
    exchange.isBatch = true;
    // The spec's example answers an empty batch with a bare "Invalid Request".
    if (body.length === 0) return this.writer.error(exchange, null, EMPTY_BATCH);
    if (body.length > this.options.maxBatchSize) {
      return this.writer.error(exchange, null, invalidRequest(`batch of ${body.length} exceeds the limit of ${this.options.maxBatchSize}`));
    }
    return this.dispatchBatch(body, exchange);
  }

  private dispatchBatch(items: unknown[], exchange: RpcHttpExchange): RpcItemAnswer | Promise<RpcItemAnswer> {
    const n = items.length;
    const limit = this.options.batchConcurrency;
    const out: Array<RpcItemAnswer | Promise<RpcItemAnswer>> = new Array(n);
    const pending: number[] = [];
    let next = 0;
    while (next < n && pending.length < limit) {
      const answer = this.dispatchItem(items[next], exchange);
      if (isPromiseLike(answer)) pending.push(next);
      out[next++] = answer;
    }
    if (pending.length === 0) return joinBatch(out as RpcItemAnswer[]);
    // Each pending item, once settled, becomes a worker that takes the next unstarted item.
    const work = async (index: number) => {
      out[index] = await out[index];
      while (next < n) {
        const i = next++;
        const answer = this.dispatchItem(items[i], exchange);
        out[i] = isPromiseLike(answer) ? await answer : answer;
      }
    };
    return Promise.all(pending.map(work)).then(() => joinBatch(out as RpcItemAnswer[]));
  }

  private dispatchItem(raw: unknown, exchange: RpcHttpExchange): RpcItemAnswer | Promise<RpcItemAnswer> {
    const call = this.pipeline.resolve(raw, exchange, 'http');
    if (isRejectedCall(call)) return call.isNotification ? undefined : this.writer.error(exchange, call.id, call.error);
    const { definition, ctx } = call;
    const stream = definition.stream;
    // Durable stream methods are started on this endpoint; live ones only stream on the stream route.
    if (stream && !stream.durable) {
      if (ctx.isNotification) return undefined;
      return this.writer.error(exchange, call.id, invalidRequest(`"${ctx.method}" is a stream method; call it with POST ${this.options.stream.path}`));
    }
    let result: unknown;
    try {
      result = stream ? this.durable!.start(call) : this.pipeline.run(call);
    } catch (error) {
      return this.failure(call, error);
    }
    if (isPromiseLike(result)) {
      return result.then(
        (value) => this.success(call, value),
        (error) => this.failure(call, error),
      );
    }
    return this.success(call, result);
  }

  private success(call: RpcResolvedCall, value: unknown): RpcItemAnswer {
    if (call.ctx.isNotification) return undefined;
    return this.writer.success(call.ctx.exchange, call.id, value, call.ctx.method);
  }

  private failure(call: RpcResolvedCall, thrown: unknown): RpcItemAnswer {
    const { ctx } = call;
    // A notification's failure is still mapped: an internal error gets logged.
    const error = this.writer.errorOf(thrown, ctx.method);
    if (ctx.isNotification) return undefined;
    return this.writer.error(ctx.exchange, call.id, error, ctx.method);
  }
}

function joinBatch(answers: readonly RpcItemAnswer[]): RpcItemAnswer {
  const answered = answers.filter((o): o is string => o !== undefined);
  return answered.length ? serializeBatch(answered) : undefined;
}
