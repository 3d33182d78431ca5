/**
 * `HEAD` on the module's GET routes (docs/architecture.md, "The HTTP edge"): answered at once with
 * what GET would answer — its status and header fields, no body — and nothing started or attached
 * for it. The durable attach route (`GET /rpc/streams/:id`) gives GET's 200 and SSE headers, its
 * 404, 400 and 204, and leaves no subscription behind; the live stream route (`GET /rpc/stream`),
 * whose status only running the method would tell, refuses HEAD (405 with `Allow: GET, POST`, the
 * method never runs); `/rpc` and `/mcp` refuse HEAD as they refuse GET (405). Each HEAD goes over a kept-alive
 * connection that must then serve the next request: a response the server still holds open would
 * keep it busy.
 */
import http from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import { Injectable } from '@nestjs/common';
import { MemoryStreamStore, RpcMethod, RpcStream, StreamFormat, type DurableEventListener } from '@nest-jsonrpc/server';
import { eventually } from '../support/async.js';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';
import { DurableJobs, durableModule, feeds, headerAuth } from '../durable/support/durable-fixtures.js';
import { openSse } from '../durable/support/sse-client.js';

/** A memory store that counts the live subscriptions the module takes (each attach takes one). */
class CountingStore extends MemoryStreamStore {
  subscribed = 0;
  live = 0;

  override async subscribe(id: string, listener: DurableEventListener): Promise<() => void> {
    const off = await super.subscribe(id, listener);
    this.subscribed++;
    this.live++;
    let done = false;
    return () => {
      if (!done) this.live--;
      done = true;
      off();
    };
  }
}

let liveCalls = 0;

@Injectable()
class LiveSse {
  @RpcMethod('live.ticks')
  @RpcStream({ format: StreamFormat.Sse })
  async *ticks() {
    liveCalls++;
    yield { tick: 1 };
  }
}

interface HeadAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  bodyBytes: number;
}

/** Header fields that describe the connection or the moment, not the answer. */
const PER_RESPONSE = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding', 'content-length', 'x-request-id']);

/** The answer's header fields by name, without those of the connection. */
function answerFields(headers: IncomingHttpHeaders | Headers): Record<string, string> {
  const entries: Array<[string, string]> = [];
  if (headers instanceof Headers) headers.forEach((value, name) => entries.push([name, value]));
  else for (const [name, value] of Object.entries(headers)) entries.push([name, String(value)]);
  return Object.fromEntries(entries.filter(([name]) => !PER_RESPONSE.has(name)).sort(([a], [b]) => a.localeCompare(b)));
}

describe('HEAD on the GET routes: GET’s status and headers, no body, nothing started or attached', () => {
  const store = new CountingStore();
  let t: TestApp;
  let port: number;
  /** One socket: a HEAD the server has not finished would leave the request after it unanswered. */
  let agent: http.Agent;

  /** `method` on `path` over the shared keep-alive socket; fails if the answer has not ended within `timeoutMs`. */
  function send(method: 'HEAD' | 'GET' | 'PUT', path: string, headers: Record<string, string> = {}, timeoutMs = 3000): Promise<HeadAnswer> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        req.destroy();
        reject(new Error(`${method} ${path} did not complete within ${timeoutMs} ms`));
      }, timeoutMs);
      const req = http.request({ host: '127.0.0.1', port, path, method, headers, agent }, (res) => {
        let bodyBytes = 0;
        res.on('data', (chunk: Buffer) => (bodyBytes += chunk.length));
        res.on('end', () => {
          clearTimeout(timer);
          resolve({ status: res.statusCode!, headers: res.headers, bodyBytes });
        });
      });
      req.on('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      req.end();
    });
  }

  /** HEAD `path`, then GET the list on the same socket: both must complete. */
  async function head(path: string, headers: Record<string, string> = {}): Promise<HeadAnswer> {
    const answer = await send('HEAD', path, headers);
    const next = await send('GET', '/rpc/streams');
    expect(next.status).toBe(200);
    return answer;
  }

  async function startManual(): Promise<{ id: string; feed: NonNullable<ReturnType<typeof feeds.get>> }> {
    const started = await t.rpc({ jsonrpc: '2.0', method: 'jobs.manual', id: 1 });
    const id: string = started.body.result.stream_id;
    const feed = await eventually(() => feeds.get(id), 2000, 'the producer');
    return { id, feed };
  }

  beforeAll(async () => {
    t = await startTestApp(
      durableModule(
        {
          stream: { enabled: true },
          durable: { enabled: true, store },
          openrpc: { enabled: true, info: { title: 'head', version: '1' } },
          explorer: { enabled: true },
          mcp: { enabled: true, rest: true },
        },
        [DurableJobs, LiveSse],
      ),
      headerAuth,
    );
    port = Number(new URL(t.url).port);
    agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  });
  afterAll(async () => {
    agent?.destroy();
    await t?.close();
  });

  describe('the durable attach route, GET /rpc/streams/:id', () => {
    it('a running stream: 200 with GET’s SSE headers at once, no body, no subscription; a later GET gets every event', async () => {
      const { id, feed } = await startManual();
      feed.push({ n: 1 }, { n: 2 });
      await eventually(async () => (await (await fetch(`${t.url}/rpc/streams/${id}/events`)).json()).events.length === 2);
      const before = store.subscribed;

      const answer = await head(`/rpc/streams/${id}`, { 'x-request-id': 'head-1' });

      expect([answer.status, answer.bodyBytes]).toEqual([200, 0]);
      expect(answer.headers['content-type']).toBe('text/event-stream; charset=utf-8');
      expect(answer.headers['x-stream-id']).toBe(id);
      expect(answer.headers['x-request-id']).toBe('head-1');
      expect(answer.headers['cache-control']).toBe('no-cache');
      expect([store.subscribed - before, store.live]).toEqual([0, 0]);

      // GET on the same stream: the same header fields, and every event, the ones after the HEAD too.
      const sse = await openSse(`${t.url}/rpc/streams/${id}`);
      expect(answerFields(sse.headers)).toEqual(answerFields(answer.headers));
      await sse.waitForEvents(2);
      feed.push({ n: 3 });
      feed.end();
      await sse.ended;
      expect(sse.events.map((e) => [e.id, e.event, e.data])).toEqual([
        ['1', 'chunk', '{"n":1}'],
        ['2', 'chunk', '{"n":2}'],
        ['3', 'chunk', '{"n":3}'],
        ['4', 'done', '{}'],
      ]);
      expect(sse.end).toBeDefined();
      await eventually(() => store.live === 0, 2000, 'the GET’s subscription to close');
    });

    it('GET’s refusals: 404 for an unknown id (UUID or not) and another user’s stream, 400 for a bad or out-of-range cursor', async () => {
      const { id, feed } = await startManual();
      feed.push({ n: 1 });
      await eventually(async () => (await (await fetch(`${t.url}/rpc/streams/${id}/events`)).json()).events.length === 1);
      const before = store.subscribed;
      const cases: Array<[string, Record<string, string>]> = [
        ['/rpc/streams/3afeeefd-8e17-4a2c-b493-c4a63e69ff0f', {}],
        ['/rpc/streams/not-a-stream', {}],
        [`/rpc/streams/${id}`, { 'last-event-id': 'x' }],
        [`/rpc/streams/${id}`, { 'last-event-id': '5' }],
        [`/rpc/streams/${id}?last_event_id=1&last_event_id=2`, {}],
      ];
      for (const [path, headers] of cases) {
        const get = await send('GET', path, headers);
        const answer = await head(path, headers);
        expect([path, answer.status, answer.bodyBytes, answerFields(answer.headers)]).toEqual([path, get.status, 0, answerFields(get.headers)]);
      }
      expect(
        await Promise.all(cases.map(async ([path, headers]) => (await send('HEAD', path, headers)).status)),
      ).toEqual([404, 404, 400, 400, 400]);
      expect([store.subscribed - before, store.live]).toEqual([0, 0]);
      feed.end();
    });

    it('another user’s stream: 404 as on GET', async () => {
      const started = await t.rpc({ jsonrpc: '2.0', method: 'jobs.manual', id: 1 }, { headers: { 'x-user': 'bob' } });
      const id: string = started.body.result.stream_id;
      const feed = await eventually(() => feeds.get(id), 2000, 'the producer');
      const get = await send('GET', `/rpc/streams/${id}`, { 'x-user': 'alice' });
      const answer = await head(`/rpc/streams/${id}`, { 'x-user': 'alice' });
      expect([get.status, answer.status, answer.bodyBytes]).toEqual([404, 404, 0]);
      feed.end();
    });

    it('a finished stream: 200 with the SSE headers from a cursor before its end, 204 at its end, as on GET', async () => {
      const started = await t.rpc({ jsonrpc: '2.0', method: 'jobs.count', params: { n: 3 }, id: 1 });
      const id: string = started.body.result.stream_id;
      await eventually(async () => (await (await fetch(`${t.url}/rpc/streams/${id}/events`)).json()).events.length === 4);
      const before = store.subscribed;

      const replay = await head(`/rpc/streams/${id}`);
      expect([replay.status, replay.bodyBytes, replay.headers['content-type']]).toEqual([200, 0, 'text/event-stream; charset=utf-8']);
      const atEnd = await head(`/rpc/streams/${id}`, { 'last-event-id': '4' });
      const getAtEnd = await send('GET', `/rpc/streams/${id}`, { 'last-event-id': '4' });
      expect([atEnd.status, atEnd.bodyBytes, answerFields(atEnd.headers)]).toEqual([204, 0, answerFields(getAtEnd.headers)]);
      expect([store.subscribed - before, store.live]).toEqual([0, 0]);
    });
  });

  it('the live stream route, GET /rpc/stream: 405 at once with PUT’s refusal and Allow, and the method never runs', async () => {
    const calls = liveCalls;
    const put = await send('PUT', '/rpc/stream?method=live.ticks&id=1');
    const answer = await head('/rpc/stream?method=live.ticks&id=1');
    expect([put.status, put.headers.allow]).toEqual([405, 'GET, POST']);
    expect([answer.status, answer.bodyBytes, answerFields(answer.headers), liveCalls - calls]).toEqual([405, 0, answerFields(put.headers), 0]);
  });

  it.each([
    ['/rpc', 405],
    ['/mcp', 405],
  ])('%s, which GET refuses: GET’s refusal, with its Allow', async (path, status) => {
    const get = await send('GET', path);
    const answer = await head(path);
    expect([get.status, get.headers.allow]).toEqual([status, 'POST']);
    expect([answer.status, answer.bodyBytes, answerFields(answer.headers)]).toEqual([status, 0, answerFields(get.headers)]);
  });

  it.each([
    ['the durable list', '/rpc/streams'],
    ['a page of durable events', '/rpc/streams/{id}/events?limit=2'],
    ['the OpenRPC document', '/rpc/openrpc.json'],
    ['the explorer page', '/rpc/explorer'],
    ['the MCP REST tool list', '/mcp/tools'],
  ])('%s: GET’s status and header fields at once, no body', async (_name, template) => {
    const started = await t.rpc({ jsonrpc: '2.0', method: 'jobs.count', params: { n: 3 }, id: 1 });
    const path = template.replace('{id}', started.body.result.stream_id);
    const get = await send('GET', path);
    expect(get.status).toBe(200);
    const answer = await head(path);
    expect([answer.status, answer.bodyBytes, answerFields(answer.headers)]).toEqual([get.status, 0, answerFields(get.headers)]);
  });
});
