/**
 * Batch items run concurrently within `batchConcurrency`, are answered in
 * request order, and one failing or slow item never affects another.
 */
import { Injectable, Module } from '@nestjs/common';
import { JsonRpcModule, RpcMethod, RpcNotFoundException, RpcParam } from '@nest-jsonrpc/server';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';

/** Calls held open until the test releases them, to observe what runs at the same time. */
@Injectable()
class Gate {
  inFlight = 0;
  maxInFlight = 0;
  readonly started: string[] = [];
  readonly finished: string[] = [];
  private readonly waiting = new Map<string, () => void>();

  async hold(tag: string): Promise<string> {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    this.started.push(tag);
    await new Promise<void>((resolve) => this.waiting.set(tag, resolve));
    this.inFlight--;
    this.finished.push(tag);
    return tag;
  }

  release(tag: string): void {
    const resolve = this.waiting.get(tag);
    if (!resolve) throw new Error(`${tag} is not waiting`);
    this.waiting.delete(tag);
    resolve();
  }

  releaseAll(): void {
    for (const tag of [...this.waiting.keys()]) this.release(tag);
  }

  isWaiting(tag: string): boolean {
    return this.waiting.has(tag);
  }

  reset(): void {
    this.releaseAll();
    this.inFlight = this.maxInFlight = 0;
    this.started.length = this.finished.length = 0;
  }
}

@Injectable()
class BatchMethods {
  constructor(private readonly gate: Gate) {}

  @RpcMethod('held')
  held(@RpcParam('tag') tag: string) {
    return this.gate.hold(tag);
  }

  @RpcMethod('quick')
  async quick(@RpcParam('tag') tag: string) {
    await new Promise((r) => setImmediate(r));
    this.gate.finished.push(tag);
    return tag;
  }

  @RpcMethod('sync')
  sync(@RpcParam('tag') tag: string) {
    this.gate.finished.push(tag);
    return tag;
  }

  @RpcMethod('rejects')
  async rejects() {
    await new Promise((r) => setImmediate(r));
    throw new RpcNotFoundException('Nothing here');
  }

  @RpcMethod('throws')
  throws(): never {
    throw new Error('boom');
  }
}

const until = async (condition: () => boolean, what: string, timeoutMs = 5000) => {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
};
const settle = () => new Promise((r) => setTimeout(r, 50));
const call = (method: string, tag: string | undefined, id: number) =>
  tag === undefined ? { jsonrpc: '2.0', method, id } : { jsonrpc: '2.0', method, params: { tag }, id };

function moduleWith(batchConcurrency?: number) {
  @Module({
    imports: [JsonRpcModule.forRoot(batchConcurrency === undefined ? {} : { batchConcurrency })],
    providers: [Gate, BatchMethods],
  })
  class BatchModule {}
  return BatchModule;
}

describe('batches with batchConcurrency: 3', () => {
  let t: TestApp;
  let gate: Gate;
  beforeAll(async () => {
    t = await startTestApp(moduleWith(3));
    gate = t.app.get(Gate);
  });
  afterAll(async () => {
    gate.releaseAll();
    await t.close();
  });
  beforeEach(() => gate.reset());

  it('runs at most 3 items at once, starts the next as one finishes, and answers in request order', async () => {
    const tags = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
    const answer = t.rpc(tags.map((tag, i) => call('held', tag, i)));

    await until(() => gate.inFlight === 3, '3 items in flight');
    await settle();
    expect(gate.started).toEqual(['a', 'b', 'c']);
    expect(gate.inFlight).toBe(3);

    // Releasing the second frees one slot: exactly one more item starts.
    gate.release('b');
    await until(() => gate.started.length === 4, 'a fourth item to start');
    await settle();
    expect(gate.started).toEqual(['a', 'b', 'c', 'd']);
    expect(gate.inFlight).toBe(3);

    // Release the rest in reverse order of arrival, as they start.
    while (gate.finished.length < tags.length) {
      const waiting = tags.filter((tag) => gate.isWaiting(tag)).reverse();
      for (const tag of waiting) gate.release(tag);
      await settle();
    }
    const res = await answer;
    expect(gate.maxInFlight).toBe(3);
    expect(gate.finished).not.toEqual(tags);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(tags.map((tag, i) => ({ jsonrpc: '2.0', result: tag, id: i })));
  });

  it('a slow item holds one slot only: the others all complete meanwhile', async () => {
    const batch = [call('held', 'slow', 0), ...['q1', 'q2', 'q3', 'q4', 'q5'].map((tag, i) => call('quick', tag, i + 1))];
    const answer = t.rpc(batch);
    await until(() => gate.finished.length === 5, 'the quick items to finish');
    expect(gate.finished).toEqual(['q1', 'q2', 'q3', 'q4', 'q5']);
    expect(gate.isWaiting('slow')).toBe(true);
    gate.release('slow');
    const res = await answer;
    expect(res.body).toEqual([
      { jsonrpc: '2.0', result: 'slow', id: 0 },
      ...['q1', 'q2', 'q3', 'q4', 'q5'].map((tag, i) => ({ jsonrpc: '2.0', result: tag, id: i + 1 })),
    ]);
  });

  it('failing items (sync throw, rejection, bad params, unknown method) never affect the others', async () => {
    const res = await t.rpc([
      call('throws', undefined, 1),
      call('quick', 'x', 2),
      call('rejects', undefined, 3),
      call('sync', 'y', 4),
      { jsonrpc: '2.0', method: 'quick', params: { tag: 5 }, id: 5 },
      call('missing', undefined, 6),
      call('quick', 'z', 7),
    ]);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      { jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: 1 },
      { jsonrpc: '2.0', result: 'x', id: 2 },
      { jsonrpc: '2.0', error: { code: -32002, message: 'Nothing here' }, id: 3 },
      { jsonrpc: '2.0', result: 'y', id: 4 },
      {
        jsonrpc: '2.0',
        error: { code: -32602, message: 'Parameter "tag" must be a string', data: [{ path: 'tag', message: 'Parameter "tag" must be a string', code: 'isString' }] },
        id: 5,
      },
      { jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id: 6 },
      { jsonrpc: '2.0', result: 'z', id: 7 },
    ]);
  });

  it('synchronous items do not take slots from asynchronous ones', async () => {
    const batch = [call('held', 'h1', 0), call('sync', 's1', 1), call('sync', 's2', 2), call('held', 'h2', 3), call('held', 'h3', 4), call('sync', 's3', 5)];
    const answer = t.rpc(batch);
    await until(() => gate.inFlight === 3, '3 held items in flight');
    expect(gate.finished).toEqual(['s1', 's2']);
    gate.releaseAll();
    await until(() => gate.finished.length === 6, 'all items');
    const res = await answer;
    expect(res.body.map((r: { result: string }) => r.result)).toEqual(['h1', 's1', 's2', 'h2', 'h3', 's3']);
  });

  it('two concurrent batches are bounded separately (the bound is per HTTP request)', async () => {
    const first = t.rpc(['a1', 'a2', 'a3', 'a4'].map((tag, i) => call('held', tag, i)));
    const second = t.rpc(['b1', 'b2', 'b3', 'b4'].map((tag, i) => call('held', tag, i)));
    await until(() => gate.inFlight === 6, '6 items in flight');
    await settle();
    expect(gate.inFlight).toBe(6);
    while (gate.finished.length < 8) {
      gate.releaseAll();
      await settle();
    }
    expect((await first).body.map((r: { result: string }) => r.result)).toEqual(['a1', 'a2', 'a3', 'a4']);
    expect((await second).body.map((r: { result: string }) => r.result)).toEqual(['b1', 'b2', 'b3', 'b4']);
  });
});

describe('batches with the default batchConcurrency (16)', () => {
  let t: TestApp;
  let gate: Gate;
  beforeAll(async () => {
    t = await startTestApp(moduleWith());
    gate = t.app.get(Gate);
  });
  afterAll(async () => {
    gate.releaseAll();
    await t.close();
  });

  it('runs 16 items at once out of 20', async () => {
    const tags = Array.from({ length: 20 }, (_, i) => `t${i}`);
    const answer = t.rpc(tags.map((tag, i) => call('held', tag, i)));
    await until(() => gate.inFlight === 16, '16 in flight');
    await settle();
    expect(gate.started.length).toBe(16);
    while (gate.finished.length < 20) {
      gate.releaseAll();
      await settle();
    }
    expect(gate.maxInFlight).toBe(16);
    expect((await answer).body.map((r: { id: number }) => r.id)).toEqual(tags.map((_, i) => i));
  });
});
