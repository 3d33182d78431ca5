import { Logger } from '@nestjs/common';
import { RpcContext, type RpcHttpExchange } from '../context/rpc-context.js';
import { RpcExceptionMapper } from '../errors/rpc-exception-mapper.js';
import { RpcException } from '../errors/rpc-exceptions.js';
import type { ResolvedJsonRpcOptions } from '../options/json-rpc-options.js';
import { resolveJsonRpcOptions } from '../options/resolve-options.js';
import type { RpcPipeline, RpcResolvedCall } from '../pipeline/rpc-pipeline.js';
import { RpcBatchDispatcher } from './rpc-batch-dispatcher.js';
import { RpcReplyWriter } from './rpc-reply-writer.js';

/**
 * A pipeline whose methods are answered by the test: `slow.<n>` waits for `release(n)`, `sync`
 * answers at once, `fail` throws. Records how many calls run at the same time.
 */
class ScriptedPipeline {
  running = 0;
  maxRunning = 0;
  readonly started: string[] = [];
  private readonly waiting = new Map<string, () => void>();

  resolve(raw: { method: string; id?: number; params?: unknown }, exchange: RpcHttpExchange): RpcResolvedCall {
    const ctx = new RpcContext(raw.method, raw.id, undefined, raw.id === undefined, 'http', exchange, { resolve: () => [] });
    return { ctx, definition: { name: raw.method } as never, id: raw.id ?? null, invoker: undefined as never };
  }

  run(call: RpcResolvedCall): unknown {
    const method = call.ctx.method;
    this.started.push(method);
    if (method === 'sync') return 'now';
    if (method === 'fail') throw new RpcException('No', { code: 7 });
    this.running++;
    this.maxRunning = Math.max(this.maxRunning, this.running);
    return new Promise((resolve) =>
      this.waiting.set(method, () => {
        this.running--;
        resolve(method);
      }),
    );
  }

  release(method: string): void {
    const go = this.waiting.get(method);
    this.waiting.delete(method);
    go?.();
  }

  get pending(): string[] {
    return [...this.waiting.keys()];
  }
}

const exchange = () => ({ status: 200, retryAfter: 0, noteRetryAfter() {}, noteDeprecation() {} }) as unknown as RpcHttpExchange;
const turn = () => new Promise((resolve) => setImmediate(resolve));
const item = (method: string, id?: number) => ({ jsonrpc: '2.0', method, id });

function dispatcher(options: Partial<Parameters<typeof resolveJsonRpcOptions>[0]> = {}) {
  const pipeline = new ScriptedPipeline();
  const resolved: ResolvedJsonRpcOptions = resolveJsonRpcOptions(options);
  const writer = new RpcReplyWriter(new RpcExceptionMapper(), new Logger('test'));
  return { pipeline, d: new RpcBatchDispatcher(pipeline as unknown as RpcPipeline, writer, resolved, undefined) };
}

describe('RpcBatchDispatcher', () => {
  it('runs at most batchConcurrency items at once, starting the next as one settles, answering in request order', async () => {
    const { pipeline, d } = dispatcher({ batchConcurrency: 2 });
    const answer = d.dispatch([item('slow.1', 1), item('slow.2', 2), item('slow.3', 3), item('slow.4', 4)], exchange()) as Promise<string>;
    await turn();
    expect(pipeline.pending).toEqual(['slow.1', 'slow.2']);
    pipeline.release('slow.2');
    await turn();
    expect(pipeline.pending).toEqual(['slow.1', 'slow.3']);
    pipeline.release('slow.3');
    await turn();
    expect(pipeline.pending).toEqual(['slow.1', 'slow.4']);
    pipeline.release('slow.4');
    pipeline.release('slow.1');
    expect(JSON.parse(await answer).map((r: { id: number; result: string }) => [r.id, r.result])).toEqual([
      [1, 'slow.1'],
      [2, 'slow.2'],
      [3, 'slow.3'],
      [4, 'slow.4'],
    ]);
    expect(pipeline.maxRunning).toBe(2);
  });

  it('synchronous items are answered without a Promise; notifications are run but not answered', () => {
    const { pipeline, d } = dispatcher();
    expect(d.dispatch([item('sync', 1), item('sync'), item('fail', 2), item('fail')], exchange())).toBe(
      '[{"jsonrpc":"2.0","result":"now","id":1},{"jsonrpc":"2.0","error":{"code":7,"message":"No"},"id":2}]',
    );
    expect(pipeline.started).toEqual(['sync', 'sync', 'fail', 'fail']);
    expect(d.dispatch([item('sync')], exchange())).toBeUndefined();
  });

  it('an empty batch and an oversized batch are refused before any item runs', () => {
    const { pipeline, d } = dispatcher({ maxBatchSize: 2 });
    expect(d.dispatch([], exchange())).toBe('{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"},"id":null}');
    expect(d.dispatch([item('sync', 1), item('sync', 2), item('sync', 3)], exchange())).toBe(
      '{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: batch of 3 exceeds the limit of 2"},"id":null}',
    );
    expect(pipeline.started).toEqual([]);
  });
});
