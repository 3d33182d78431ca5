/**
 * POST /rpc/stream over real sockets, every format: exact bodies and headers, rows written as
 * they are produced, AsyncIterable / Iterable / Observable sources, hostile row content.
 */
import { Injectable, Module } from '@nestjs/common';
import { JsonRpcModule, RpcMethod, RpcStream, StreamFormat, type RpcContext } from '@nest-jsonrpc/server';
import { interval, map, take } from 'rxjs';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';
import { call, deferred, openStream } from './stream-client.js';
import { CONTENT_TYPES, FORMATS, defineStreamMethods, expectedBody, hasRows } from './stream-test-methods.js';

const state = {
  gate: deferred(),
  produced: [] as number[],
  contexts: [] as RpcContext[],
};

@Injectable()
class Streams {
  @RpcMethod('plain.echo')
  echo(params: unknown) {
    return params;
  }

  @RpcMethod('sync.rows')
  @RpcStream()
  syncRows(p: { n: number }) {
    return Array.from({ length: p.n }, (_, i) => ({ i }));
  }

  @RpcMethod('observable.rows')
  @RpcStream({ format: StreamFormat.Ndjson })
  observableRows() {
    // One row every 40 ms: must arrive one by one, not as the Observable's last value.
    return interval(40).pipe(take(3), map((i) => ({ tick: i })));
  }

  @RpcMethod('async.observable')
  @RpcStream()
  async asyncObservable() {
    await new Promise((r) => setTimeout(r, 5));
    return interval(10).pipe(take(2), map((i) => ({ late: i })));
  }

  @RpcMethod('not.iterable')
  @RpcStream()
  notIterable() {
    return { just: 'an object' };
  }

  @RpcMethod('empty.rows')
  @RpcStream({ format: StreamFormat.JsonArray })
  async *emptyRows() {
    // nothing
  }
}

defineStreamMethods(Streams, 'gated', async function* (_params, ctx: RpcContext) {
  state.contexts.push(ctx);
  state.produced.push(1);
  yield { n: 1, delta: 'first' };
  await state.gate.promise;
  state.produced.push(2);
  yield { n: 2, delta: 'second' };
});

const HOSTILE = {
  emoji: '😀 naïve 日本語',
  newline: 'line1\nline2\r\nline3\n\ndata: injected',
  script: '</script><script>alert(1)</script><!--',
  separators: 'a\u2028b\u2029c',
  nul: 'x\u0000y',
  quote: '"\\',
};
defineStreamMethods(Streams, 'hostile', function* () {
  yield HOSTILE;
  yield 'event: error';
});

@Module({ imports: [JsonRpcModule.forRoot({ stream: { enabled: true } })], providers: [Streams] })
class StreamsModule {}

describe('POST /rpc/stream frames', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(StreamsModule);
  });
  afterAll(() => t.close());
  beforeEach(() => {
    state.gate = deferred();
    state.produced = [];
    state.contexts = [];
  });

  describe.each(FORMATS)('%s', (format) => {
    it('writes the first row while the producer is still blocked on the second, then the exact body', async () => {
      const s = await openStream(t.url, { body: call(`gated.${format}`, {}, 7) });
      expect(s.status).toBe(200);
      expect(s.headers['content-type']).toBe(CONTENT_TYPES[format]);
      expect(s.headers['cache-control']).toBe('no-cache');
      expect(s.headers['x-accel-buffering']).toBe('no');
      expect(s.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      await s.waitFor((text) => hasRows(format, text, 1));
      // The producer is parked on the gate: row 2 does not exist yet, row 1 is on the wire.
      expect(state.produced).toEqual([1]);
      expect(s.text()).toBe(expectedBody(format, ['{"n":1,"delta":"first"}']).slice(0, s.text().length));
      expect(s.text()).not.toContain('second');
      state.gate.resolve();
      const body = await s.ended;
      expect(body).toBe(expectedBody(format, ['{"n":1,"delta":"first"}', '{"n":2,"delta":"second"}']));
      expect(state.produced).toEqual([1, 2]);
      expect(state.contexts[0].id).toBe(7);
    });

    it('keeps unicode, line breaks, NUL and </script> inside rows intact and inert', async () => {
      const s = await openStream(t.url, { body: call(`hostile.${format}`) });
      const body = await s.ended;
      // No raw "<" can reach the wire, and no line break inside a row.
      expect(body).not.toContain('<');
      expect(body).toContain('\\u003c/script>');
      expect(body).toContain('\\u2028');
      const hostileJson = JSON.stringify(HOSTILE).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
      expect(body).toBe(expectedBody(format, [hostileJson, '"event: error"']));
      // And the rows parse back to exactly what was produced.
      let rows: unknown[];
      if (format === StreamFormat.Ndjson) rows = body.trimEnd().split('\n').map((l) => JSON.parse(l));
      else if (format === StreamFormat.JsonArray) rows = JSON.parse(body);
      else rows = body.split('\n\n').filter((f) => f.startsWith('data: ') && f !== 'data: {}').map((f) => JSON.parse(f.slice(6)));
      expect(rows).toEqual([HOSTILE, 'event: error']);
    });

    it('streams a request without id (a notification) like any other', async () => {
      const s = await openStream(t.url, { body: { jsonrpc: '2.0', method: `gated.${format}` } });
      expect(s.status).toBe(200);
      state.gate.resolve();
      expect(await s.ended).toBe(expectedBody(format, ['{"n":1,"delta":"first"}', '{"n":2,"delta":"second"}']));
      expect(state.contexts[0].isNotification).toBe(true);
      expect(state.contexts[0].id).toBeUndefined();
    });
  });

  it('a sync Iterable streams all its rows (coalesced), ending cleanly', async () => {
    const s = await openStream(t.url, { body: call('sync.rows', { n: 5000 }) });
    const body = await s.ended;
    const lines = body.split('\n');
    expect(lines.pop()).toBe('');
    expect(lines).toHaveLength(5000);
    expect(lines[4999]).toBe('{"i":4999}');
    // 5000 rows produced in one tick share writes: far fewer chunks than rows.
    expect(s.chunks.length).toBeLessThan(100);
  });

  it('an Observable streams row by row, not as its last value', async () => {
    const s = await openStream(t.url, { body: call('observable.rows') });
    const body = await s.ended;
    expect(body).toBe('{"tick":0}\n{"tick":1}\n{"tick":2}\n');
    const arrivals = s.chunks.map((c) => c.at);
    expect(arrivals.length).toBeGreaterThanOrEqual(3);
    // 40 ms apart at the source: the last row arrives well after the first.
    expect(arrivals[arrivals.length - 1] - arrivals[0]).toBeGreaterThan(50);
  });

  it('an async handler resolving to an Observable streams too', async () => {
    const s = await openStream(t.url, { body: call('async.observable') });
    expect(await s.ended).toBe('{"late":0}\n{"late":1}\n');
  });

  it('an empty stream is a complete, empty JSON array', async () => {
    const s = await openStream(t.url, { body: call('empty.rows') });
    expect(await s.ended).toBe('[]');
  });

  it('a handler that returns no iterable is a plain 500 envelope, before any stream', async () => {
    const res = await t.rpc(call('not.iterable', undefined, 3), { path: '/rpc/stream' });
    expect(res.status).toBe(500);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.body).toEqual({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: 3 });
    expect(t.logger.text('error')).toContain('must return an AsyncIterable, an Iterable or an Observable, got Object');
  });

  it('a stream method called on /rpc is -32600 naming the stream endpoint', async () => {
    const res = await t.rpc(call('gated.ndjson', {}, 4));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      jsonrpc: '2.0',
      error: { code: -32600, message: 'Invalid Request: "gated.ndjson" is a stream method; call it with POST /rpc/stream' },
      id: 4,
    });
    expect(state.produced).toEqual([]);
  });

  it('a plain method called on /rpc/stream is -32600 naming /rpc', async () => {
    const res = await t.rpc(call('plain.echo', { a: 1 }, 5), { path: '/rpc/stream' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      jsonrpc: '2.0',
      error: { code: -32600, message: 'Invalid Request: "plain.echo" is not a stream method; call it with POST /rpc' },
      id: 5,
    });
  });
});

describe('configurable stream headers', () => {
  @Module({
    imports: [
      JsonRpcModule.forRoot({
        stream: { enabled: true, path: '/api/live', headers: { 'Cache-Control': 'no-store', 'x-accel-buffering': null, 'x-stream-by': 'nest-jsonrpc' } },
      }),
    ],
    providers: [Streams],
  })
  class CustomHeadersModule {}

  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(CustomHeadersModule);
  });
  afterAll(() => t.close());

  it('merges stream.headers over the defaults, null removing one; stream.path moves the route', async () => {
    const s = await openStream(t.url, { path: '/api/live', body: call('sync.rows', { n: 2 }) });
    expect(await s.ended).toBe('{"i":0}\n{"i":1}\n');
    expect(s.headers['cache-control']).toBe('no-store');
    expect(s.headers['x-accel-buffering']).toBeUndefined();
    expect(s.headers['x-stream-by']).toBe('nest-jsonrpc');
    expect(s.headers['x-content-type-options']).toBe('nosniff');
    expect((await t.post(call('sync.rows', { n: 1 }), { path: '/rpc/stream' })).status).toBe(404);
  });
});
