/**
 * The EventSource form (`GET /rpc/stream?method=&params=&id=`) and the demo's streaming methods,
 * over real HTTP, parsed with eventsource-parser as a browser would.
 */
import { CanActivate, ExecutionContext, Injectable, Module, UseGuards } from '@nestjs/common';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { JsonRpcModule, RpcMethod, RpcRateLimit, RpcStream, StreamFormat, type RpcContext } from '@nest-jsonrpc/server';
import { StreamingDemoModule } from '../../apps/demo/src/streaming/streaming-demo.module.js';
import { downloadByte } from '../../apps/demo/src/streaming/streaming-demo.rpc.js';
import { secondsLeftOf } from '../support/matchers.js';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';
import { call, openStream } from './stream-client.js';

const seen: { ctx?: RpcContext; cookie?: string } = {};

@Injectable()
class CookieGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const cookie = context.switchToHttp().getRequest().headers.cookie as string | undefined;
    seen.cookie = cookie;
    return cookie === 'session=ok';
  }
}

@Injectable()
class GetMethods {
  @RpcMethod('echo.sse')
  @RpcStream({ format: StreamFormat.Sse })
  async *echo(params: unknown, ctx: RpcContext) {
    seen.ctx = ctx;
    yield { params };
    yield { id: ctx.id ?? null };
  }

  @RpcMethod('cookie.sse')
  @RpcStream({ format: StreamFormat.Sse })
  @UseGuards(CookieGuard)
  async *withCookie() {
    yield { authorised: true };
  }

  @RpcMethod('limited.sse')
  @RpcRateLimit({ limit: 2, interval: 60 })
  @RpcStream({ format: StreamFormat.Sse })
  async *limited() {
    yield { ok: true };
  }

  @RpcMethod('admin.sse', { roles: ['admin'] })
  @RpcStream({ format: StreamFormat.Sse })
  async *admin() {
    yield { secret: 1 };
  }
}

@Module({
  imports: [
    JsonRpcModule.forRoot({
      stream: { enabled: true },
      security: { rolesResolver: (req) => String(req.headers['x-roles'] ?? '').split(',').filter(Boolean) },
    }),
    StreamingDemoModule,
  ],
  providers: [GetMethods, CookieGuard],
})
class GetModule {}

function parseSse(text: string): EventSourceMessage[] {
  const events: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => events.push(event) });
  parser.feed(text);
  return events;
}

const query = (method: string, params?: unknown, id?: string) =>
  `/rpc/stream?method=${encodeURIComponent(method)}` +
  (params === undefined ? '' : `&params=${encodeURIComponent(JSON.stringify(params))}`) +
  (id === undefined ? '' : `&id=${encodeURIComponent(id)}`);

describe('GET /rpc/stream (EventSource) and the demo streams', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(GetModule);
  });
  afterAll(() => t.close());

  describe('GET variant', () => {
    it('serves an SSE method with params and id from the query string', async () => {
      const s = await openStream(t.url, { method: 'GET', path: query('echo.sse', { text: 'ünï </script>', n: [1, 2] }, '42'), headers: { accept: 'text/event-stream' } });
      expect(s.status).toBe(200);
      expect(s.headers['content-type']).toBe('text/event-stream; charset=utf-8');
      expect(s.headers['cache-control']).toBe('no-cache');
      const body = await s.ended;
      expect(body).toBe(
        'data: {"params":{"text":"ünï \\u003c/script>","n":[1,2]}}\n\ndata: {"id":42}\n\nevent: end\ndata: {}\n\n',
      );
      expect(parseSse(body).map((e) => [e.event, JSON.parse(e.data)])).toEqual([
        [undefined, { params: { text: 'ünï </script>', n: [1, 2] } }],
        [undefined, { id: 42 }],
        ['end', {}],
      ]);
      expect(seen.ctx!.id).toBe(42);
    });

    it('keeps a non-integer id a string, and streams without id', async () => {
      let s = await openStream(t.url, { method: 'GET', path: query('echo.sse', undefined, 'req-7') });
      expect(await s.ended).toContain('data: {"id":"req-7"}');
      s = await openStream(t.url, { method: 'GET', path: query('echo.sse') });
      expect(await s.ended).toBe('data: {}\n\ndata: {"id":null}\n\nevent: end\ndata: {}\n\n');
      expect(seen.ctx!.isNotification).toBe(true);
    });

    it('the same guards apply: cookies of an EventSource withCredentials reach them', async () => {
      let res = await fetch(t.url + query('cookie.sse', undefined, '1'));
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ jsonrpc: '2.0', error: { code: -32001, message: 'Access denied' }, id: 1 });
      res = await fetch(t.url + query('cookie.sse', undefined, '1'), { headers: { cookie: 'session=ok' } });
      expect(res.status).toBe(200);
      expect(await res.text()).toBe('data: {"authorised":true}\n\nevent: end\ndata: {}\n\n');
      expect(seen.cookie).toBe('session=ok');
    });

    it('the same roles apply', async () => {
      let res = await fetch(t.url + query('admin.sse', undefined, '2'));
      expect(res.status).toBe(400);
      expect((await res.json()).error).toEqual({ code: -32001, message: 'One of the following roles is required: admin' });
      res = await fetch(t.url + query('admin.sse', undefined, '2'), { headers: { 'x-roles': 'admin' } });
      expect(await res.text()).toBe('data: {"secret":1}\n\nevent: end\ndata: {}\n\n');
    });

    it('the same rate limits apply: over the limit -> 400 -32003 with Retry-After, no stream', async () => {
      for (let i = 0; i < 2; i++) {
        const res = await fetch(t.url + query('limited.sse', undefined, String(i)));
        expect(res.status).toBe(200);
        expect(await res.text()).toBe('data: {"ok":true}\n\nevent: end\ndata: {}\n\n');
      }
      const res = await fetch(t.url + query('limited.sse', undefined, '9'));
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      const body = await res.json();
      expect(body).toEqual({
        jsonrpc: '2.0',
        error: { code: -32003, message: 'Rate limit exceeded for limited.sse', data: { retryAfter: secondsLeftOf(60) } },
        id: 9,
      });
      expect(res.headers.get('retry-after')).toBe(String(body.error.data.retryAfter));
    });

    it('refuses non-SSE methods, bad params, a missing method and unknown methods with plain envelopes', async () => {
      const expectError = async (path: string, status: number, error: unknown, id: unknown = null) => {
        const res = await fetch(t.url + path);
        expect(res.status).toBe(status);
        expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
        expect(await res.json()).toEqual({ jsonrpc: '2.0', error, id });
      };
      await expectError(query('logs.tail', undefined, '3'), 400, {
        code: -32600,
        message: 'Invalid Request: "logs.tail" streams ndjson; GET serves only sse methods, use POST /rpc/stream',
      }, 3);
      await expectError(`/rpc/stream?method=echo.sse&params=%7Bnope&id=4`, 400, { code: -32700, message: 'Parse error: "params" must be URL-encoded JSON' }, 4);
      await expectError(`/rpc/stream?params=%7B%7D`, 400, { code: -32600, message: 'Invalid Request: the "method" query parameter is required, once' });
      await expectError(`/rpc/stream?method=a&method=b`, 400, { code: -32600, message: 'Invalid Request: the "method" query parameter is required, once' });
      await expectError(query('nope.sse', undefined, '5'), 404, { code: -32601, message: 'Method not found' }, 5);
      await expectError(query('echo.sse', 'a string'), 400, { code: -32600, message: 'Invalid Request' });
    });

    it('PUT/DELETE on the stream path -> 405', async () => {
      const res = await fetch(`${t.url}/rpc/stream`, { method: 'DELETE' });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('GET, POST');
    });
  });

  describe('demo methods', () => {
    it('chat.stream: tokens as separate SSE events over time, then done, then end', async () => {
      const s = await openStream(t.url, { body: call('chat.stream', { prompt: 'hi', delayMs: 15 }) });
      const events = parseSse(await s.ended);
      const deltas = events.filter((e) => e.event === undefined).map((e) => JSON.parse(e.data));
      expect(deltas.slice(0, -1).map((d) => d.delta).join('')).toBe('You said: "hi". Streaming works: each word is its own event.');
      expect(deltas.at(-1)).toEqual({ done: true, finish_reason: 'stop' });
      expect(events.at(-1)).toMatchObject({ event: 'end', data: '{}' });
      expect(s.chunks.length).toBeGreaterThanOrEqual(10);
      expect(s.chunks.at(-1)!.at - s.chunks[0].at).toBeGreaterThan(100);
    });

    it('logs.tail: NDJSON until the client leaves', async () => {
      const s = await openStream(t.url, { body: call('logs.tail', { intervalMs: 20 }) });
      await s.waitFor((text) => text.split('\n').length > 4);
      s.destroy();
      const lines = s.text().split('\n').filter(Boolean).map((l) => JSON.parse(l));
      expect(lines.slice(0, 3).map((l) => l.seq)).toEqual([1, 2, 3]);
      expect(lines[0]).toEqual({ seq: 1, ts: expect.any(String), level: 'info', message: 'request 1 served' });
    });

    it('export.progress: percent rows then {done, url}', async () => {
      const s = await openStream(t.url, { body: call('export.progress', { steps: 4, stepMs: 5 }), headers: { 'x-request-id': 'exp-1' } });
      expect(await s.ended).toBe(
        'data: {"percent":25}\n\ndata: {"percent":50}\n\ndata: {"percent":75}\n\ndata: {"percent":100}\n\n' +
          'data: {"done":true,"url":"/exports/exp-1.csv"}\n\nevent: end\ndata: {}\n\n',
      );
    });

    it('files.download: base64 result_chunk rows that reassemble into the file', async () => {
      const size = 200_000;
      const s = await openStream(t.url, { body: call('files.download', { size, chunkSize: 30_000 }), headers: { 'x-request-id': 'dl-1' } });
      const rows = (await s.ended).trimEnd().split('\n').map((l) => JSON.parse(l));
      expect(rows).toHaveLength(7);
      rows.forEach((row, seq) =>
        expect(row).toEqual({ type: 'result_chunk', result_id: 'file-dl-1', chunk_seq: seq, data: expect.any(String), encoding: 'base64', more: seq < 6 }),
      );
      const parts = rows.map((r) => Buffer.from(r.data, 'base64'));
      expect(parts.slice(0, 6).every((p) => p.length === 30_000)).toBe(true);
      const file = Buffer.concat(parts);
      expect(file.length).toBe(size);
      for (let i = 0; i < size; i++) if (file[i] !== downloadByte(i)) throw new Error(`byte ${i} differs`);
    });

    it('files.download of an empty file: one empty last chunk', async () => {
      const s = await openStream(t.url, { body: call('files.download', { size: 0 }), headers: { 'x-request-id': 'dl-0' } });
      expect(await s.ended).toBe('{"type":"result_chunk","result_id":"file-dl-0","chunk_seq":0,"data":"","encoding":"base64","more":false}\n');
    });

    it('the chat page is served at /', async () => {
      const res = await fetch(`${t.url}/`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(await res.text()).toContain("new EventSource(`/rpc/stream?method=chat.stream");
    });
  });
});
