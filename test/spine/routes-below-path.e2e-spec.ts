/**
 * `path` moves the module's family of routes: with only `path: '/api/rpc'` set, the stream,
 * durable, OpenRPC and explorer routes are served below it (and no longer under `/rpc`), every
 * answer that names one (a durable handle's `sse_url`, the OpenRPC document, the explorer page,
 * the startup log) names the route served, MCP stays on `/mcp`, and `@nest-jsonrpc/client` given
 * only `url` finds them all with its own defaults (`<url>/stream`, `<url>/streams`).
 */
import { Injectable, Module } from '@nestjs/common';
import { JsonRpcClient, type DurableStreamEvent } from '@nest-jsonrpc/client';
import { JsonRpcModule, MemoryStreamStore, RpcMcp, RpcMethod, RpcStream } from '@nest-jsonrpc/server';
import { openStream } from '../streaming/stream-client.js';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';

@Injectable()
class Methods {
  @RpcMethod('echo')
  echo(params: unknown) {
    return params;
  }

  @RpcMethod('ticks')
  @RpcStream()
  async *ticks(p: { n: number }) {
    for (let i = 1; i <= p.n; i++) yield { i };
  }

  @RpcMethod('jobs.report')
  @RpcStream({ durable: true })
  @RpcMcp()
  async *report(p: { n: number }) {
    for (let i = 1; i <= p.n; i++) yield { i };
  }
}

@Module({
  imports: [
    JsonRpcModule.forRoot({
      path: '/api/rpc',
      stream: { enabled: true },
      durable: { enabled: true, store: new MemoryStreamStore(), retryMs: 20 },
      openrpc: { enabled: true, info: { title: 'Moved', version: '1.0.0' } },
      explorer: { enabled: true },
      mcp: { enabled: true },
    }),
  ],
  providers: [Methods],
})
class MovedModule {}

const call = (method: string, params?: unknown, id = 1) => ({ jsonrpc: '2.0', method, ...(params !== undefined && { params }), id });
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** The `event:` names of an SSE body. */
const eventNames = (text: string) => text.split('\n').filter((l) => l.startsWith('event: ')).map((l) => l.slice('event: '.length));

describe("routes below `path: '/api/rpc'`", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(MovedModule);
  });
  afterAll(() => t.close());

  it('POST /api/rpc answers; /rpc is not served', async () => {
    expect((await t.rpc(call('echo', [1]), { path: '/api/rpc' })).body).toEqual({ jsonrpc: '2.0', result: [1], id: 1 });
    expect((await t.post(call('echo', [1]))).status).toBe(404);
  });

  it('POST /api/rpc/stream streams; the stream route under /rpc is gone', async () => {
    const stream = await openStream(t.url, { path: '/api/rpc/stream', body: call('ticks', { n: 3 }) });
    expect(stream.status).toBe(200);
    const rows = (await stream.ended).trim().split('\n').map((line) => JSON.parse(line));
    expect(rows).toEqual([{ i: 1 }, { i: 2 }, { i: 3 }]);
    expect((await fetch(`${t.url}/rpc/stream`)).status).toBe(404);
    expect((await t.post(call('ticks', { n: 1 }), { path: '/rpc/stream' })).status).toBe(404);
  });

  it('a durable call answers an sse_url below /api/rpc/streams, and attaching there follows it', async () => {
    const { body } = await t.rpc(call('jobs.report', { n: 2 }), { path: '/api/rpc' });
    expect(body.result).toEqual({ stream_id: expect.any(String), sse_url: `/api/rpc/streams/${body.result.stream_id}`, status: 'running' });
    const attached = await fetch(t.url + body.result.sse_url, { headers: { accept: 'text/event-stream' } });
    expect(attached.status).toBe(200);
    expect(eventNames(await attached.text())).toEqual(['chunk', 'chunk', 'done', 'end']);
    expect((await fetch(`${t.url}/rpc/streams/${body.result.stream_id}`)).status).toBe(404);
  });

  it("an MCP durable tool's handle names the same route; MCP itself stays on /mcp", async () => {
    const res = await fetch(`${t.url}/mcp`, { method: 'POST', headers: MCP_HEADERS, body: JSON.stringify(call('tools/call', { name: 'jobs.report', arguments: { n: 1 } })) });
    expect(res.status).toBe(200);
    const text = await res.text();
    const answer = res.headers.get('content-type')?.startsWith('text/event-stream')
      ? text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6))).find((m) => 'result' in m)
      : JSON.parse(text);
    const handle = JSON.parse(answer.result.content[0].text);
    expect(handle).toMatchObject({ sse_url: `/api/rpc/streams/${handle.stream_id}` });
  });

  it('GET /api/rpc/openrpc.json is the document, naming the moved routes', async () => {
    const res = await fetch(`${t.url}/api/rpc/openrpc.json`);
    expect(res.status).toBe(200);
    const document = await res.json();
    expect(document.servers).toEqual([{ name: 'default', url: `${t.url}/api/rpc` }]);
    const stream = (name: string) => document.methods.find((m: { name: string }) => m.name === name)['x-stream'];
    expect(stream('ticks')).toMatchObject({ path: '/api/rpc/stream' });
    expect(stream('jobs.report')).toMatchObject({ path: '/api/rpc', durable: true, streamsPath: '/api/rpc/streams' });
    expect((await fetch(`${t.url}/rpc/openrpc.json`)).status).toBe(404);
  });

  it('GET /api/rpc/explorer is the page, reading the document at /api/rpc/openrpc.json', async () => {
    const res = await fetch(`${t.url}/api/rpc/explorer`);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('<meta name="openrpc-document" content="/api/rpc/openrpc.json" />');
    expect(html).toContain('src="/api/rpc/explorer/explorer.js"');
    expect((await fetch(`${t.url}/api/rpc/explorer/explorer.js`)).status).toBe(200);
    expect((await fetch(`${t.url}/rpc/explorer`)).status).toBe(404);
  });

  it('the startup log names the routes served', () => {
    const log = t.logger.text('log');
    expect(log).toContain('Streaming on POST/GET /api/rpc/stream');
    expect(log).toContain('OpenRPC: rpc.discover on POST /api/rpc, GET /api/rpc/openrpc.json');
    expect(log).toContain('Explorer on GET /api/rpc/explorer');
    expect(log).toContain('MCP on POST /mcp');
  });

  it('@nest-jsonrpc/client given only `url` calls, streams and attaches', async () => {
    const client = new JsonRpcClient({ url: `${t.url}/api/rpc` });
    expect(await client.call('echo', { a: 1 })).toEqual({ a: 1 });
    const rows: unknown[] = [];
    for await (const row of client.stream('ticks', { n: 3 })) rows.push(row);
    expect(rows).toEqual([{ i: 1 }, { i: 2 }, { i: 3 }]);
    const started = await client.call<{ stream_id: string }>('jobs.report', { n: 2 });
    const events: DurableStreamEvent[] = [];
    for await (const event of client.attach(started.stream_id)) events.push(event);
    expect(events).toEqual([
      { id: 1, event: 'chunk', data: { i: 1 } },
      { id: 2, event: 'chunk', data: { i: 2 } },
      { id: 3, event: 'done', data: {} },
    ]);
  });
});
