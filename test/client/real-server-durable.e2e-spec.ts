/**
 * client.attach(), cancel(), list() and events() against the real durable-stream server, with a
 * TCP proxy in between that can cut every connection: the client reconnects with Last-Event-ID
 * and sees each event exactly once, in order.
 */
import { Injectable, Module } from '@nestjs/common';
import { JsonRpcClient, JsonRpcError, type DurableStreamEvent } from '@nest-jsonrpc/client';
import { JsonRpcModule, MemoryStreamStore, RpcException, RpcMethod, RpcStream, progress, type RpcContext } from '@nest-jsonrpc/server';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';

@Injectable()
class Jobs {
  /** `n` events `delayMs` apart: rows `{i}`, every 4th a progress event; then done, error or (with `hold`) nothing. */
  @RpcMethod('jobs.ticks')
  @RpcStream({ durable: true })
  async *ticks(p: { n: number; delayMs?: number; fail?: boolean; hold?: boolean }, ctx: RpcContext) {
    for (let i = 1; i <= p.n; i++) {
      if (p.delayMs) await sleep(p.delayMs, undefined, { signal: ctx.signal });
      yield i % 4 === 0 ? progress(i / p.n) : { i };
    }
    if (p.fail) throw new RpcException('Report failed', { code: -32050, data: { at: p.n } });
    if (p.hold) await sleep(60_000, undefined, { signal: ctx.signal });
  }
}

@Module({
  imports: [JsonRpcModule.forRoot({ durable: { enabled: true, store: new MemoryStreamStore(), retryMs: 20 } })],
  providers: [Jobs],
})
class DurableClientModule {}

/** A TCP proxy to the app whose connections can all be cut at once. */
class CuttableProxy {
  private readonly sockets = new Set<net.Socket>();
  private readonly server = net.createServer((client) => {
    const upstream = net.connect(this.targetPort, '127.0.0.1');
    for (const s of [client, upstream]) {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.pipe(upstream).pipe(client);
  });
  cuts = 0;

  constructor(private readonly targetPort: number) {}

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as net.AddressInfo).port}`;
  }

  cutAll(): void {
    this.cuts++;
    for (const s of this.sockets) s.destroy();
  }

  close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

const expected = (n: number): DurableStreamEvent[] =>
  Array.from({ length: n }, (_, k) => {
    const i = k + 1;
    return i % 4 === 0 ? { id: i, event: 'progress', data: i / n } : { id: i, event: 'chunk', data: { i } };
  });

describe('@nest-jsonrpc/client against the real durable-stream server', () => {
  let t: TestApp;
  let proxy: CuttableProxy;
  let client: JsonRpcClient;

  beforeAll(async () => {
    t = await startTestApp(DurableClientModule);
    proxy = new CuttableProxy(Number(new URL(t.url).port));
    client = new JsonRpcClient({ url: `${await proxy.listen()}/rpc` });
  });
  afterAll(async () => {
    await proxy.close();
    await t.close();
  });

  const start = async (params: Record<string, unknown>) => {
    const started = await client.call<{ stream_id: string; sse_url: string; status: string }>('jobs.ticks', params);
    expect(started).toEqual({ stream_id: started.stream_id, sse_url: `/rpc/streams/${started.stream_id}`, status: 'running' });
    return started.stream_id;
  };

  it('attach yields every event once, in order, ending with `done`', async () => {
    const id = await start({ n: 9, delayMs: 2 });
    const events: DurableStreamEvent[] = [];
    for await (const e of client.attach(id)) events.push(e);
    expect(events).toEqual([...expected(9), { id: 10, event: 'done', data: {} }]);
  });

  it('resumes across connections cut mid-stream: exactly once, in order', async () => {
    const id = await start({ n: 40, delayMs: 15 });
    const attachment = client.attach(id, { reconnect: { initialDelayMs: 5 } });
    const events: DurableStreamEvent[] = [];
    const cutter = setInterval(() => proxy.cutAll(), 120);
    try {
      for await (const e of attachment) events.push(e);
    } finally {
      clearInterval(cutter);
    }
    expect(proxy.cuts).toBeGreaterThanOrEqual(3);
    expect(attachment.connections).toBeGreaterThanOrEqual(3);
    expect(events).toEqual([...expected(40), { id: 41, event: 'done', data: {} }]);
  });

  it('lastEventId resumes after that event; at the terminal event the attach ends at once', async () => {
    const id = await start({ n: 6 });
    const all: DurableStreamEvent[] = [];
    for await (const e of client.attach(id)) all.push(e);
    const rest: DurableStreamEvent[] = [];
    for await (const e of client.attach(id, { lastEventId: 4 })) rest.push(e);
    expect(rest).toEqual(all.slice(4));
    const none: DurableStreamEvent[] = [];
    for await (const e of client.attach(id, { lastEventId: all.length })) none.push(e);
    expect(none).toEqual([]);
  });

  it('an `error` terminal throws JsonRpcError after the events before it', async () => {
    const id = await start({ n: 3, fail: true });
    const events: DurableStreamEvent[] = [];
    let error: unknown;
    try {
      for await (const e of client.attach(id)) events.push(e);
    } catch (e) {
      error = e;
    }
    expect(events).toEqual(expected(3));
    expect(error).toBeInstanceOf(JsonRpcError);
    expect(error).toMatchObject({ code: -32050, message: 'Report failed', data: { at: 3 } });
  });

  it('cancel() ends attached clients with `cancelled`; list() and events() report it; cancel is idempotent', async () => {
    const id = await start({ n: 2, hold: true });
    const events: DurableStreamEvent[] = [];
    for await (const e of client.attach(id)) {
      events.push(e);
      if (e.id === 2) expect(await client.cancel(id)).toEqual({ stream_id: id, status: 'cancelled' });
    }
    expect(events).toEqual([...expected(2), { id: 3, event: 'cancelled', data: {} }]);
    expect(await client.cancel(id)).toEqual({ stream_id: id, status: 'cancelled' });
    const listed = await client.list({ status: 'cancelled' });
    // Anonymous callers list nothing (a stream belongs to whoever holds its id).
    expect(listed).toEqual([]);
    expect((await client.events(id)).map((e) => e.event)).toEqual(['chunk', 'chunk', 'cancelled']);
  });

  it('an unknown stream id is a 404 JsonRpcError, not retried', async () => {
    const attachment = client.attach('00000000-0000-4000-8000-000000000000');
    await expect(attachment.next()).rejects.toMatchObject({ name: 'JsonRpcError', status: 404 });
    expect(attachment.connections).toBe(1);
  });
});
