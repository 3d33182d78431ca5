/**
 * One SSE dialect. The durable attach route (`GET /rpc/streams/:id`) writes with
 * the live stream route's encoder: the same headers (`stream.headers` applied, nosniff), the same
 * `:` keep-alive comment, the same escaping of `<`, U+2028 and U+2029 in rows and in stored error
 * events, and the same final `event: end`. A stored error served live in NDJSON or as a JSON array
 * becomes that format's own error frame.
 */
import { Injectable } from '@nestjs/common';
import { MemoryStreamStore, RpcException, RpcMethod, RpcStream, StreamFormat } from '@nest-jsonrpc/server';
import { eventually } from '../support/async.js';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';
import { durableModule, feeds } from './support/durable-fixtures.js';
import { openSse } from './support/sse-client.js';

@Injectable()
class HtmlJobs {
  /** A row and an error whose texts would break out of a <script> or a JS string if not escaped. */
  @RpcMethod('html.job')
  @RpcStream({ durable: true })
  async *job() {
    yield { text: '</script><b>\u2028\u2029' };
    throw new RpcException('<img src=x onerror=alert(1)>', { code: 4100, data: { html: '</script>' } });
  }

  @RpcMethod('html.ndjson')
  @RpcStream({ durable: true, format: StreamFormat.Ndjson })
  ndjson() {
    return this.job();
  }

  @RpcMethod('html.array')
  @RpcStream({ durable: true, format: StreamFormat.JsonArray })
  array() {
    return this.job();
  }
}

const ESCAPED_ROW = '{"text":"\\u003c/script>\\u003cb>\\u2028\\u2029"}';
const ESCAPED_ERROR = '{"code":4100,"message":"\\u003cimg src=x onerror=alert(1)>","data":{"html":"\\u003c/script>"}}';

describe('durable attach speaks the live stream route\'s SSE dialect', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(
      durableModule(
        {
          stream: { enabled: true, headers: { 'x-frame-options': 'DENY', 'x-accel-buffering': null } },
          durable: { enabled: true, store: new MemoryStreamStore(), keepAliveMs: 60_000 },
        },
        [HtmlJobs],
      ),
    );
  });
  afterAll(() => t.close());

  async function start(method: string): Promise<string> {
    const res = await t.rpc({ jsonrpc: '2.0', method, id: 1 });
    return res.body.result.stream_id;
  }

  it('headers: stream.headers applied (added and removed), nosniff, no-cache, X-Request-Id, X-Stream-Id', async () => {
    const id = await start('html.job');
    const sse = await openSse(`${t.url}/rpc/streams/${id}`, { headers: { 'x-request-id': 'attach-1' } });
    await sse.ended;
    expect(sse.status).toBe(200);
    expect(sse.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(sse.headers.get('cache-control')).toBe('no-cache');
    expect(sse.headers.get('x-content-type-options')).toBe('nosniff');
    expect(sse.headers.get('x-frame-options')).toBe('DENY');
    expect(sse.headers.get('x-accel-buffering')).toBeNull();
    expect(sse.headers.get('x-request-id')).toBe('attach-1');
    expect(sse.headers.get('x-stream-id')).toBe(id);
  });

  it('rows and the stored error event are escaped like live rows; the stream ends with event: end', async () => {
    const id = await start('html.job');
    const sse = await openSse(`${t.url}/rpc/streams/${id}`);
    await sse.ended;
    expect(sse.raw).toBe(
      'retry: 3000\n\n' +
        `id: 1\nevent: chunk\ndata: ${ESCAPED_ROW}\n\n` +
        `id: 2\nevent: error\ndata: {"error":${ESCAPED_ERROR}}\n\n` +
        'event: end\ndata: {}\n\n',
    );
  });

  it('the same stored error, served live on /rpc/stream, is each format\'s own error frame (escaped, not re-serialised)', async () => {
    const ndjson = await t.post({ jsonrpc: '2.0', method: 'html.ndjson', id: 1 }, { path: '/rpc/stream' });
    expect(await ndjson.text()).toBe(`${ESCAPED_ROW}\n{"error":${ESCAPED_ERROR}}\n`);
    const array = await t.post({ jsonrpc: '2.0', method: 'html.array', id: 1 }, { path: '/rpc/stream' });
    expect(await array.text()).toBe(`[${ESCAPED_ROW},{"_error":${ESCAPED_ERROR}}]`);
    // The events page splices the stored JSON as is: parsing it gives back the original texts.
    const id = await start('html.job');
    const page = await eventually(async () => {
      const body = await (await fetch(`${t.url}/rpc/streams/${id}/events`)).json();
      return body.events.length === 2 ? body : undefined;
    });
    expect(page.events[1]).toEqual({ id: 2, event: 'error', data: { error: { code: 4100, message: '<img src=x onerror=alert(1)>', data: { html: '</script>' } } } });
  });
});

describe('one keep-alive option for every SSE response', () => {
  let t: TestApp;
  const KEEP_ALIVE_MS = 120;
  beforeAll(async () => {
    // Only stream.keepAliveMs: the durable attach follows it (durable.keepAliveMs is its deprecated override).
    t = await startTestApp(durableModule({ stream: { enabled: true, keepAliveMs: KEEP_ALIVE_MS }, durable: { enabled: true, store: new MemoryStreamStore() } }));
  });
  afterAll(() => t.close());

  it('stream.keepAliveMs keeps an idle durable attach alive, one ":" comment about every keepAliveMs', async () => {
    const started = await t.rpc({ jsonrpc: '2.0', method: 'jobs.manual', id: 1 });
    const id = started.body.result.stream_id as string;
    const feed = await eventually(() => feeds.get(id), 2000, 'the producer to start');
    const sse = await openSse(`${t.url}/rpc/streams/${id}`);
    await sse.waitFor((s) => s.comments.length >= 3, 20 * KEEP_ALIVE_MS);
    const gaps = [sse.commentTimes[1] - sse.commentTimes[0], sse.commentTimes[2] - sse.commentTimes[1]];
    for (const gap of gaps) {
      expect(gap).toBeGreaterThanOrEqual(0.75 * KEEP_ALIVE_MS);
      expect(gap).toBeLessThan(3 * KEEP_ALIVE_MS);
    }
    expect(sse.raw.startsWith('retry: 3000\n\n:\n\n')).toBe(true);
    feed.end();
    await sse.ended;
  });
});
