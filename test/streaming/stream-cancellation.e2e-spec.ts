/**
 * Clients that vanish or stop reading, and servers that close: the producer stops (ctx.signal
 * aborts, `finally` runs within 100 ms), nothing is written afterwards, memory stays bounded,
 * and nothing leaks (handles, timers, heap, unhandled rejections).
 */
import { Injectable, Module } from '@nestjs/common';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleepWithSignal } from 'node:timers/promises';
import v8 from 'node:v8';
import vm from 'node:vm';
import { JsonRpcModule, RpcMethod, RpcStream, StreamFormat, type RpcContext } from '@nest-jsonrpc/server';
import { finalize, interval, map, tap } from 'rxjs';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';
import { eventually, sleep } from '../support/async.js';
import { call, openStream } from './stream-client.js';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

interface Run {
  produced: number;
  abortedAt?: number;
  finallyAt?: number;
  started?: boolean;
  /** The handler was entered (`slow.start`). */
  entered?: boolean;
  /** Lets a waiting handler return its iterable (`slow.start`). */
  release?: () => void;
  /** The stream writer called the iterator's return() (`slow.start`). */
  returned?: boolean;
}
const runs = new Map<string, Run>();
const runOf = (key: string): Run => {
  let run = runs.get(key);
  if (!run) runs.set(key, (run = { produced: 0 }));
  return run;
};

@Injectable()
class Producers {
  /** Endless, with a wait that ignores the signal: only return() can stop it. */
  @RpcMethod('ticks')
  @RpcStream()
  async *ticks(p: { key: string }, ctx: RpcContext) {
    const run = runOf(p.key);
    ctx.signal.addEventListener('abort', () => (run.abortedAt = performance.now()), { once: true });
    try {
      for (let i = 0; ; i++) {
        run.produced++;
        yield { i };
        await sleep(10);
      }
    } finally {
      run.finallyAt = performance.now();
    }
  }

  /** Parked on a long wait that honours ctx.signal, as a handler awaiting an upstream should. */
  @RpcMethod('parked')
  @RpcStream({ format: StreamFormat.Sse })
  async *parked(p: { key: string }, ctx: RpcContext) {
    const run = runOf(p.key);
    try {
      run.produced++;
      yield { waiting: true };
      await sleepWithSignal(60_000, undefined, { signal: ctx.signal });
      run.produced++;
      yield { never: true };
    } finally {
      run.finallyAt = performance.now();
    }
  }

  /** Endless and as fast as the socket allows: rows of ~1 KiB. */
  @RpcMethod('firehose')
  @RpcStream()
  async *firehose(p: { key: string }) {
    const run = runOf(p.key);
    const pad = 'x'.repeat(1000);
    try {
      for (let i = 0; ; i++) {
        run.produced++;
        yield { i, pad };
      }
    } finally {
      run.finallyAt = performance.now();
    }
  }

  /** Takes a while before returning its generator (think: auth lookup), which then records that it ran. */
  /** Returns its iterable only when the test releases it; records every pull and the return(). */
  @RpcMethod('slow.start')
  @RpcStream()
  async slowStart(p: { key: string }, ctx: RpcContext) {
    const run = runOf(p.key);
    ctx.signal.addEventListener('abort', () => (run.abortedAt = performance.now()), { once: true });
    await new Promise<void>((resolve) => {
      run.release = resolve;
      run.entered = true;
    });
    const iterator: AsyncIterator<number> & AsyncIterable<number> = {
      [Symbol.asyncIterator]: () => iterator,
      next: async () => {
        run.started = true;
        return { value: 1, done: false };
      },
      return: async () => {
        run.returned = true;
        return { value: undefined, done: true };
      },
    };
    return iterator;
  }

  /** An endless Observable: leaving must unsubscribe it. */
  @RpcMethod('observable.endless')
  @RpcStream({ format: StreamFormat.JsonArray })
  observableEndless(p: { key: string }) {
    const run = runOf(p.key);
    return interval(5).pipe(
      tap(() => run.produced++),
      map((i) => ({ i })),
      finalize(() => (run.finallyAt = performance.now())),
    );
  }

  @RpcMethod('sse.slow')
  @RpcStream({ format: StreamFormat.Sse })
  async *sseSlow(p: { pauseMs: number; rows: number }) {
    for (let n = 1; n <= p.rows; n++) {
      yield { n };
      if (n < p.rows) await sleep(p.pauseMs);
    }
  }
}

@Module({ imports: [JsonRpcModule.forRoot({ stream: { enabled: true, keepAliveMs: 50 } })], providers: [Producers] })
class ProducersModule {}

/** Counts writes a response receives after its socket was destroyed. */
function watchLateWrites(t: TestApp): { late: number } {
  const counter = { late: 0 };
  // First of the server's request listeners, on either platform: every response is watched.
  (t.app.getHttpServer() as Server).prependListener('request', (_req: IncomingMessage, res: ServerResponse) => {
    const write = res.write;
    const end = res.end;
    res.write = function (this: typeof res, ...args: any[]) {
      if (res.destroyed) counter.late++;
      return (write as any).apply(this, args);
    } as typeof res.write;
    res.end = function (this: typeof res, ...args: any[]) {
      if (res.destroyed) counter.late++;
      return (end as any).apply(this, args);
    } as typeof res.end;
  });
  return counter;
}

describe('cancellation, backpressure and shutdown', () => {
  let t: TestApp;
  let lateWrites: { late: number };
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);

  beforeAll(async () => {
    process.on('unhandledRejection', onUnhandled);
    t = await startTestApp(ProducersModule, (app) => {
      lateWrites = watchLateWrites({ app } as TestApp);
    });
  });
  afterAll(async () => {
    await t.close();
    process.off('unhandledRejection', onUnhandled);
  });
  afterEach(() => {
    expect(unhandled).toEqual([]);
    expect(lateWrites.late).toBe(0);
    expect(t.logger.text('error')).toBe('');
  });

  it('a client leaving mid-stream aborts ctx.signal and runs the producer finally within 100 ms; nothing more is pulled', async () => {
    const s = await openStream(t.url, { body: call('ticks', { key: 'leave' }) });
    await s.waitFor((text) => text.split('\n').length > 3);
    const leftAt = performance.now();
    s.destroy();
    const run = runOf('leave');
    await eventually(() => run.finallyAt !== undefined, 1000, 'finally');
    expect(run.abortedAt! - leftAt).toBeLessThan(100);
    expect(run.finallyAt! - leftAt).toBeLessThan(100);
    const producedAtStop = run.produced;
    await sleep(100);
    expect(run.produced).toBe(producedAtStop);
  });

  it('a producer parked on a signal-aware wait stops at once (the AbortError is not reported)', async () => {
    const s = await openStream(t.url, { body: call('parked', { key: 'parked' }) });
    await s.waitFor((text) => text.includes('waiting'));
    const leftAt = performance.now();
    s.destroy();
    const run = runOf('parked');
    await eventually(() => run.finallyAt !== undefined, 1000, 'finally');
    expect(run.finallyAt! - leftAt).toBeLessThan(100);
    expect(run.produced).toBe(1);
  });

  it('a client leaving an Observable stream unsubscribes it within 100 ms', async () => {
    const s = await openStream(t.url, { body: call('observable.endless', { key: 'observable' }) });
    await s.waitFor((text) => text.includes('{"i":2}'));
    expect(s.text().startsWith('[{"i":0},{"i":1},{"i":2}')).toBe(true);
    const leftAt = performance.now();
    s.destroy();
    const run = runOf('observable');
    await eventually(() => run.finallyAt !== undefined, 1000, 'unsubscribe');
    expect(run.finallyAt! - leftAt).toBeLessThan(100);
    const producedAtStop = run.produced;
    await sleep(50);
    expect(run.produced).toBe(producedAtStop);
  });

  it('a client leaving before the handler returned its iterable: the generator never runs, nothing is written', async () => {
    const s = openStream(t.url, { body: call('slow.start', { key: 'early' }) });
    s.catch(() => undefined);
    const run = await eventually(() => (runOf('early').entered ? runOf('early') : undefined), 2000, 'the handler to be entered');
    // No headers yet (the handler is still working): the connection drops; once the server has seen
    // it go (ctx.signal aborted), the handler returns its iterable.
    (t.app.getHttpServer() as import('node:http').Server).closeAllConnections();
    await eventually(() => run.abortedAt !== undefined, 2000, 'the server to see the client leave');
    run.release!();
    // The writer saw the closed socket and stopped the iterator without ever pulling it.
    await eventually(() => run.returned, 2000, 'the iterator to be stopped');
    expect(run.started).toBeUndefined();
  });

  it('a stalled reader on an endless stream costs bounded memory; the stream resumes intact', async () => {
    const s = await openStream(t.url, { body: call('firehose', { key: 'stall' }) });
    await s.waitFor((text) => text.length > 10_000);
    s.response.pause();
    const run = runOf('stall');
    await sleep(800);
    const producedWhileStalled = run.produced;
    await sleep(800);
    // Not pulled while the socket is full: same count 0.8 s later, and a bounded amount in flight
    // (kernel socket buffers on loopback + one coalesced chunk).
    expect(run.produced).toBe(producedWhileStalled);
    expect(producedWhileStalled * 1024).toBeLessThan(16 * 1024 * 1024);
    s.response.resume();
    await s.waitFor((text) => text.length > (producedWhileStalled + 200) * 1000, 5000);
    const lines = s.text().split('\n');
    lines.pop();
    lines.forEach((line, i) => expect(JSON.parse(line).i).toBe(i));
    s.destroy();
    await eventually(() => run.finallyAt !== undefined, 1000, 'finally');
  });

  it('SSE sends a ":" comment every keepAliveMs while idle, and none while rows flow', async () => {
    const idle = await openStream(t.url, { body: call('sse.slow', { pauseMs: 180, rows: 2 }) });
    const idleBody = await idle.ended;
    const comments = idleBody.match(/^:\n\n/gm)?.length ?? 0;
    expect(comments).toBeGreaterThanOrEqual(2);
    expect(comments).toBeLessThanOrEqual(4);
    expect(idleBody.replace(/^:\n\n/gm, '')).toBe('data: {"n":1}\n\ndata: {"n":2}\n\nevent: end\ndata: {}\n\n');
    expect(idleBody.startsWith('data: {"n":1}\n\n:\n\n')).toBe(true);

    // Rows every 10 ms against a comment after 44 ms of silence (keepAliveMs 50 less one 6 ms tick):
    // none while they flow. A loaded machine can stall this process's event loop (server and client
    // both) past that silence, and then one comment is right; so the loop's delay is measured, and
    // a comment is allowed only after a stall long enough to cause it, and never more than two
    // (writing on a fixed schedule, blind to the rows, gives about five in these 250 ms).
    const loop = monitorEventLoopDelay({ resolution: 1 });
    loop.enable();
    const busy = await openStream(t.url, { body: call('sse.slow', { pauseMs: 10, rows: 25 }) });
    const busyBody = await busy.ended;
    loop.disable();
    const stalledMs = loop.max / 1e6;
    const busyComments = busyBody.match(/^:\n\n/gm)?.length ?? 0;
    if (stalledMs < 44 - 10 - 6) expect(busyBody).not.toMatch(/^:/m);
    else expect(busyComments).toBeLessThanOrEqual(2);
    expect(busyBody.replace(/^:\n\n/gm, '').match(/^data: /gm)).toHaveLength(26);
  });

  it('500 streams aborted mid-way leave handles, timers and heap where they were', async () => {
    const kinds = () => {
      const counts: Record<string, number> = {};
      for (const kind of process.getActiveResourcesInfo().sort()) counts[kind] = (counts[kind] ?? 0) + 1;
      return counts;
    };
    const abortOne = async (key: string, method: string) => {
      const s = await openStream(t.url, { body: call(method, { key }) });
      await s.waitFor((text) => text.length > 0);
      s.destroy();
    };
    // Warm up: lazily created things (parsers, validators, JIT) are not leaks.
    for (let i = 0; i < 20; i++) await abortOne(`warm-${i}`, i % 2 ? 'ticks' : 'parked');
    await eventually(() => [...runs.keys()].filter((k) => k.startsWith('warm-')).every((k) => runs.get(k)!.finallyAt !== undefined));
    runs.clear();
    await sleep(50);
    gc();
    const handlesBefore = kinds();
    const heapBefore = process.memoryUsage().heapUsed;

    for (let batch = 0; batch < 10; batch++) {
      await Promise.all(Array.from({ length: 50 }, (_, i) => abortOne(`n-${batch}-${i}`, i % 2 ? 'ticks' : 'parked')));
    }
    await eventually(() => runs.size === 500 && [...runs.values()].every((r) => r.finallyAt !== undefined), 5000, 'all finally blocks');
    runs.clear();
    // Closed sockets take a turn or two to be released on both sides. Then the server holds no
    // connection and no kind of resource outnumbers its baseline. (Not "equals": the jest worker may
    // carry another suite's keep-alive socket or timer into the baseline, which then goes away.)
    const server = t.app.getHttpServer() as Server;
    let connections = -1;
    const countConnections = () => new Promise<number>((resolve, reject) => server.getConnections((error, n) => (error ? reject(error) : resolve(n))));
    await eventually(async () => (connections = await countConnections()) === 0, 10_000, 'the server to hold no connection', () => `${connections} open`);
    const noGrowth = () => Object.entries(kinds()).every(([kind, n]) => n <= (handlesBefore[kind] ?? 0));
    await eventually(noGrowth, 10_000, `resources back to at most ${JSON.stringify(handlesBefore)}`, () => JSON.stringify(kinds()));
    gc();
    await sleep(20);
    gc();
    const growth = process.memoryUsage().heapUsed - heapBefore;
    expect(growth).toBeLessThan(2 * 1024 * 1024);
  });
});

describe('server shutdown with streams open', () => {
  it('ends every open stream with an in-band error frame and stops its producer, so close() does not hang', async () => {
    const t = await startTestApp(ProducersModule);
    const ticks = await openStream(t.url, { body: call('ticks', { key: 'shutdown-ndjson' }) });
    const parked = await openStream(t.url, { body: call('parked', { key: 'shutdown-sse' }) });
    await ticks.waitFor((text) => text.includes('\n'));
    await parked.waitFor((text) => text.includes('waiting'));
    const closing = performance.now();
    await t.close();
    expect(performance.now() - closing).toBeLessThan(2000);
    const ticksBody = await ticks.ended;
    expect(ticksBody.endsWith('{"error":{"code":-32000,"message":"Server shutting down"}}\n')).toBe(true);
    expect(await parked.ended).toBe(
      'data: {"waiting":true}\n\nevent: error\ndata: {"error":{"code":-32000,"message":"Server shutting down"}}\n\nevent: end\ndata: {}\n\n',
    );
    await eventually(() => runOf('shutdown-ndjson').finallyAt !== undefined && runOf('shutdown-sse').finallyAt !== undefined);
  });
});
