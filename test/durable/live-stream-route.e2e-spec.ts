/**
 * A durable stream method called on the live stream route (`POST /rpc/stream`): it streams at once,
 * SSE events carry their durable `id:` (and `event:`), `X-Stream-Id` names the stream, and a
 * client that drops resumes at `GET /rpc/streams/:id` with `Last-Event-ID` — without the drop
 * cancelling anything.
 */
import { Injectable, Module } from '@nestjs/common';
import { JsonRpcModule, MemoryStreamStore, RpcException, RpcMethod, RpcStream, StreamFormat, progress, type DurableRpcContext, type RpcContext } from '@nest-jsonrpc/server';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';
import { ManualFeed, UUID_V4 } from './support/durable-fixtures.js';
import { eventually } from '../support/async.js';
import { openSse } from './support/sse-client.js';

const feeds = new Map<string, ManualFeed>();

@Injectable()
class LiveDurableJobs {
  @RpcMethod('live.sse')
  @RpcStream({ durable: true, format: StreamFormat.Sse })
  sse(_params: unknown, ctx: RpcContext) {
    const c = ctx as DurableRpcContext;
    const feed = new ManualFeed(c.streamId, c.signal);
    feeds.set(c.streamId, feed);
    return feed.rows();
  }

  @RpcMethod('live.ndjson')
  @RpcStream({ durable: true })
  async *ndjson(params: { fail?: boolean }) {
    yield { step: 1 };
    yield progress({ percent: 50 });
    if (params?.fail) throw new RpcException('Step two broke', { code: -32050, data: { step: 2 } });
    yield { step: 2 };
  }
}

@Module({
  imports: [JsonRpcModule.forRoot({ stream: { enabled: true }, durable: { enabled: true, store: new MemoryStreamStore() } })],
  providers: [LiveDurableJobs],
})
class LiveDurableModule {}

describe('durable stream methods on POST /rpc/stream', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(LiveDurableModule);
  });
  afterAll(() => t.close());

  const post = (method: string, params?: unknown, signal?: AbortSignal) =>
    fetch(`${t.url}/rpc/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', method, params, id: 1 }),
      signal,
    });

  /** Reads the body until `predicate(text)` holds. */
  async function readUntil(res: Response, predicate: (text: string) => boolean): Promise<string> {
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!predicate(text)) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    reader.releaseLock();
    return text;
  }

  it('SSE: streams live with durable ids, X-Stream-Id, then `event: end`; the stream is resumable and complete', async () => {
    const res = await post('live.sse');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const streamId = res.headers.get('x-stream-id')!;
    expect(streamId).toMatch(UUID_V4);
    const feed = await eventually(() => feeds.get(streamId), 2000, 'the producer');

    feed.push({ token: 'a' }, progress({ percent: 50 }));
    const first = await readUntil(res, (text) => text.includes('id: 2\n'));
    expect(first).toBe('id: 1\nevent: chunk\ndata: {"token":"a"}\n\nid: 2\nevent: progress\ndata: {"percent":50}\n\n');

    feed.push({ token: '</script>' });
    feed.end();
    const rest = await readUntil(res, (text) => text.endsWith('event: end\ndata: {}\n\n'));
    expect(rest).toBe('id: 3\nevent: chunk\ndata: {"token":"\\u003c/script>"}\n\nid: 4\nevent: done\ndata: {}\n\nevent: end\ndata: {}\n\n');

    // The same events, stored under the same ids, for anyone holding the id.
    const attached = await openSse(`${t.url}/rpc/streams/${streamId}`, { headers: { 'last-event-id': '1' } });
    await attached.ended;
    expect(attached.events.map((e) => [e.id, e.event, e.data])).toEqual([
      ['2', 'progress', '{"percent":50}'],
      ['3', 'chunk', '{"token":"\\u003c/script>"}'],
      ['4', 'done', '{}'],
    ]);
  });

  it('a live client that drops cancels nothing: the producer goes on and the stream completes', async () => {
    const controller = new AbortController();
    const res = await post('live.sse', undefined, controller.signal);
    const streamId = res.headers.get('x-stream-id')!;
    const feed = await eventually(() => feeds.get(streamId), 2000, 'the producer');
    feed.push({ n: 1 });
    await readUntil(res, (text) => text.includes('id: 1\n'));
    controller.abort();
    await new Promise((r) => setTimeout(r, 100));
    expect(feed.aborted).toBe(false);

    feed.push({ n: 2 });
    feed.end();
    const listed = await eventually(async () => {
      const body = await (await fetch(`${t.url}/rpc/streams/${streamId}/events?after=0`)).json();
      return body.events.length === 3 ? body.events : undefined;
    }, 3000, 'the stream to complete');
    expect(listed).toEqual([
      { id: 1, event: 'chunk', data: { n: 1 } },
      { id: 2, event: 'chunk', data: { n: 2 } },
      { id: 3, event: 'done', data: {} },
    ]);
  });

  it('NDJSON: rows alone (progress rows included), X-Stream-Id set, ends after done', async () => {
    const res = await post('live.ndjson');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
    expect(res.headers.get('x-stream-id')).toMatch(UUID_V4);
    expect(await res.text()).toBe('{"step":1}\n{"percent":50}\n{"step":2}\n');
  });

  it('NDJSON: a stored error event becomes the in-band error frame', async () => {
    const res = await post('live.ndjson', { fail: true });
    expect(res.status).toBe(200);
    const streamId = res.headers.get('x-stream-id')!;
    expect(await res.text()).toBe('{"step":1}\n{"percent":50}\n{"error":{"code":-32050,"message":"Step two broke","data":{"step":2}}}\n');
    const events = (await (await fetch(`${t.url}/rpc/streams/${streamId}/events?after=0`)).json()).events;
    expect(events.at(-1)).toEqual({ id: 3, event: 'error', data: { error: { code: -32050, message: 'Step two broke', data: { step: 2 } } } });
  });

  it('pre-stream errors are plain envelopes and start no stream', async () => {
    const res = await post('live.nope');
    expect(res.status).toBe(404);
    expect(res.headers.get('x-stream-id')).toBeNull();
    expect(await res.json()).toEqual({ jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id: 1 });
  });
});
