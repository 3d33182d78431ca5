/**
 * Durable streams end to end over real HTTP, on the default SQLite store (in a temp directory) and
 * on a RedisStreamStore over a private local Redis Cluster (three primaries, started here): start,
 * attach, resume, live hand-off, events page, list, cancel, ownership, roles, limits.
 */
import { DurableStreamRunner, SqliteStreamStore, type StreamStore } from '@nest-jsonrpc/server';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';
import { describeWithRedisServer } from '../support/redis-server.js';
import { ClusterStores } from './support/cluster-store.js';
import { durableModule, feeds, headerAuth, tempDir, UUID_V4, type ManualFeed } from './support/durable-fixtures.js';
import { eventually, sleep } from '../support/async.js';
import { openSse } from './support/sse-client.js';

/** Where the suite below runs: a store opened before the app, and what tears it down after. */
interface StoreVariant {
  name: string;
  describe: jest.Describe;
  open(): Promise<StreamStore>;
  close(): Promise<void>;
}

const sqliteTmp = tempDir();
const clusterStores = new ClusterStores();
const STORES: StoreVariant[] = [
  { name: 'SQLite store', describe, open: async () => new SqliteStreamStore({ filename: sqliteTmp.file() }), close: async () => sqliteTmp.remove() },
  {
    name: 'Redis Cluster store',
    describe: describeWithRedisServer('the durable suite on a Redis Cluster'),
    open: async () => {
      await clusterStores.start();
      return clusterStores.store();
    },
    close: () => clusterStores.stop(),
  },
];

for (const variant of STORES) variant.describe(`durable streams (${variant.name})`, () => {
  // Long enough that a loaded CI machine's timer slip (seen: 200 ms) stays inside the bounds below.
  const KEEP_ALIVE_MS = 400;
  let t: TestApp;
  let base: string;

  beforeAll(async () => {
    const store = await variant.open();
    t = await startTestApp(
      durableModule({
        durable: { enabled: true, store, keepAliveMs: KEEP_ALIVE_MS, retryMs: 1500, maxRunning: { perUser: 3 } },
      }),
      headerAuth,
    );
    base = `${t.url}/rpc/streams`;
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await variant.close();
  });

  const start = async (method: string, params?: unknown, headers: Record<string, string> = {}) => {
    const res = await t.rpc({ jsonrpc: '2.0', method, params, id: 1 }, { headers });
    expect(res.status).toBe(200);
    if (res.body.error) throw new Error(JSON.stringify(res.body.error));
    return res.body.result.stream_id as string;
  };
  const startManual = async (headers: Record<string, string> = {}) => {
    const id = await start('jobs.manual', undefined, headers);
    const feed = await eventually(() => feeds.get(id), 2000, 'the producer to start');
    return { id, feed };
  };
  const getJson = async (path: string, headers: Record<string, string> = {}, method = 'GET') => {
    const res = await fetch(`${t.url}${path}`, { method, headers });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
  };
  const statusOf = async (id: string, headers: Record<string, string> = {}) => {
    const res = await getJson(`/rpc/streams/${id}/events?after=0&limit=1000`, headers);
    return res.body.events as Array<{ id: number; event: string; data: unknown }>;
  };

  describe('start', () => {
    it('POST /rpc answers {stream_id, sse_url, status} at once, before the producer emits anything', async () => {
      const began = Date.now();
      const res = await t.rpc({ jsonrpc: '2.0', method: 'jobs.manual', id: 'a' });
      expect(Date.now() - began).toBeLessThan(1000);
      expect(res.status).toBe(200);
      const { stream_id, sse_url, status } = res.body.result;
      expect(res.body).toEqual({ jsonrpc: '2.0', result: { stream_id, sse_url: `/rpc/streams/${stream_id}`, status: 'running' }, id: 'a' });
      expect(stream_id).toMatch(UUID_V4);
      expect(sse_url).toBe(`/rpc/streams/${stream_id}`);
      expect(status).toBe('running');
      const feed = await eventually(() => feeds.get(stream_id));
      // Nothing was produced: the answer did not wait for a first event.
      expect(await statusOf(stream_id)).toEqual([]);
      feed.push({ late: true });
      feed.end();
      await eventually(async () => (await statusOf(stream_id)).length === 2);
      expect(await statusOf(stream_id)).toEqual([
        { id: 1, event: 'chunk', data: { late: true } },
        { id: 2, event: 'done', data: {} },
      ]);
    });

    it('errors before the start answer as usual and leave no stream behind', async () => {
      const bad = await t.rpc({ jsonrpc: '2.0', method: 'jobs.needsName', params: {}, id: 1 }, { headers: { 'x-user': 'nobody-else' } });
      expect(bad.body).toEqual({ jsonrpc: '2.0', error: { code: -32602, message: 'Invalid params', data: [{ path: 'name', message: 'name is required', code: null }] }, id: 1 });
      const notIterable = await t.rpc({ jsonrpc: '2.0', method: 'jobs.notIterable', id: 2 }, { headers: { 'x-user': 'nobody-else' } });
      expect(notIterable.body).toEqual({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: 2 });
      const list = await getJson('/rpc/streams', { 'x-user': 'nobody-else' });
      expect(list.body).toEqual({ streams: [] });
    });

    it('a plain method beside durable ones still answers normally; a batch can start streams', async () => {
      const res = await t.rpc([
        { jsonrpc: '2.0', method: 'math.double', params: { x: 21 }, id: 1 },
        { jsonrpc: '2.0', method: 'jobs.count', params: { n: 3 }, id: 2 },
      ]);
      expect(res.body[0]).toEqual({ jsonrpc: '2.0', result: 42, id: 1 });
      expect(res.body[1].result.status).toBe('running');
      const id = res.body[1].result.stream_id;
      await eventually(async () => (await statusOf(id)).at(-1)?.event === 'done');
      expect(await statusOf(id)).toEqual([
        { id: 1, event: 'chunk', data: { i: 1 } },
        { id: 2, event: 'chunk', data: { i: 2 } },
        { id: 3, event: 'chunk', data: { i: 3 } },
        { id: 4, event: 'done', data: {} },
      ]);
    });
  });

  describe('attach (SSE)', () => {
    it('writes retry first, then id/event/data frames, ending after the terminal event', async () => {
      const id = await start('jobs.count', { n: 10 });
      await eventually(async () => (await statusOf(id)).length === 11);
      const sse = await openSse(`${base}/${id}`);
      await sse.ended;
      expect(sse.status).toBe(200);
      expect(sse.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
      expect(sse.headers.get('cache-control')).toBe('no-cache');
      expect(sse.headers.get('x-accel-buffering')).toBe('no');
      expect(sse.headers.get('x-stream-id')).toBe(id);
      const frames = ['retry: 1500\n\n'];
      for (let i = 1; i <= 9; i++) frames.push(`id: ${i}\nevent: chunk\ndata: {"i":${i}}\n\n`);
      frames.push('id: 10\nevent: progress\ndata: {"percent":100}\n\n', 'id: 11\nevent: done\ndata: {}\n\n');
      // The live stream route's dialect: the terminal event is followed by `event: end`.
      frames.push('event: end\ndata: {}\n\n');
      expect(sse.raw).toBe(frames.join(''));
    });

    it('resume after event 5 delivers 6 first (Last-Event-ID header), then live ones', async () => {
      const { id, feed } = await startManual();
      feed.push(...[1, 2, 3, 4, 5, 6, 7].map((n) => ({ n })));
      await eventually(async () => (await statusOf(id)).length === 7);
      const sse = await openSse(`${base}/${id}`, { headers: { 'last-event-id': '5' } });
      await sse.waitForEvents(2);
      expect(sse.events).toEqual([
        { id: '6', event: 'chunk', data: '{"n":6}' },
        { id: '7', event: 'chunk', data: '{"n":7}' },
      ]);
      feed.push({ n: 8 });
      await sse.waitForEvents(3);
      expect(sse.events[2]).toEqual({ id: '8', event: 'chunk', data: '{"n":8}' });
      feed.end();
      await sse.ended;
      expect(sse.events.map((e) => e.id)).toEqual(['6', '7', '8', '9']);
      expect(sse.events[3]).toEqual({ id: '9', event: 'done', data: '{}' });
    });

    it('takes the cursor from last_event_id when there is no header, and the header wins over it', async () => {
      const id = await start('jobs.count', { n: 4 });
      await eventually(async () => (await statusOf(id)).length === 5);
      const byQuery = await openSse(`${base}/${id}?last_event_id=3`);
      await byQuery.ended;
      expect(byQuery.events.map((e) => e.id)).toEqual(['4', '5']);
      const both = await openSse(`${base}/${id}?last_event_id=1`, { headers: { 'last-event-id': '4' } });
      await both.ended;
      expect(both.events.map((e) => e.id)).toEqual(['5']);
    });

    it('answers 204 to a reconnect whose cursor is the terminal event', async () => {
      const id = await start('jobs.count', { n: 2 });
      await eventually(async () => (await statusOf(id)).length === 3);
      const res = await fetch(`${base}/${id}`, { headers: { 'last-event-id': '3' } });
      expect(res.status).toBe(204);
      expect(await res.text()).toBe('');
    });

    it('two subscribers see identical sequences; a subscriber that leaves cancels nothing', async () => {
      const { id, feed } = await startManual();
      const a = await openSse(`${base}/${id}`);
      const b = await openSse(`${base}/${id}`);
      const leaver = await openSse(`${base}/${id}`);
      for (let i = 1; i <= 50; i++) {
        feed.push(i % 7 === 0 ? { progress: i } : { i });
        if (i % 5 === 0) await sleep(3);
        if (i === 20) leaver.close();
      }
      await sleep(30);
      expect(feed.aborted).toBe(false);
      feed.end();
      await Promise.all([a.ended, b.ended]);
      expect(a.events).toHaveLength(51);
      expect(a.raw).toBe(b.raw);
      expect(a.events.map((e) => Number(e.id))).toEqual(Array.from({ length: 51 }, (_, k) => k + 1));
      expect(a.events.at(-1)!.event).toBe('done');
    });

    it('sends a ":" comment every keepAliveMs while idle', async () => {
      const { id, feed } = await startManual();
      const sse = await openSse(`${base}/${id}`);
      await sse.waitFor((s) => s.comments.length >= 2, 10 * KEEP_ALIVE_MS);
      // The same keep-alive comment as the live stream route: an empty `:` line.
      expect(sse.raw.startsWith('retry: 1500\n\n:\n\n')).toBe(true);
      // Right after a comment (i.e. just after the shared timer ticked) an event goes out: the
      // next comment must still follow within one keepAliveMs of it, not up to two periods later.
      const before = sse.comments.length;
      feed.push({ step: 1 });
      await sse.waitForEvents(1);
      const eventAt = Date.now();
      await sse.waitFor((s) => s.comments.length >= before + 3, 10 * KEEP_ALIVE_MS);
      const silence = sse.commentTimes[before] - eventAt;
      expect(silence).toBeGreaterThanOrEqual(0.4 * KEEP_ALIVE_MS);
      expect(silence).toBeLessThan(1.6 * KEEP_ALIVE_MS);
      // And while idle, one comment per keepAliveMs: neither faster nor much slower.
      const gaps = [sse.commentTimes[before + 1] - sse.commentTimes[before], sse.commentTimes[before + 2] - sse.commentTimes[before + 1]];
      for (const gap of gaps) {
        expect(gap).toBeGreaterThanOrEqual(0.75 * KEEP_ALIVE_MS);
        expect(gap).toBeLessThan(1.6 * KEEP_ALIVE_MS);
      }
      expect(sse.raw).toContain(':\n\nid: 1\nevent: chunk\ndata: {"step":1}\n\n:\n\n');
      feed.end();
      await sse.ended;
    });

    it('ends with a terminal error event keeping an RpcException code and data; other errors are -32603', async () => {
      const id = await start('jobs.fail');
      const sse = await openSse(`${base}/${id}`);
      await sse.ended;
      expect(sse.events).toEqual([
        { id: '1', event: 'chunk', data: '{"step":1}' },
        { id: '2', event: 'chunk', data: '{"step":2}' },
        { id: '3', event: 'error', data: '{"error":{"code":-32050,"message":"The job failed","data":{"step":2}}}' },
      ]);
      const crashed = await start('jobs.crash');
      const sse2 = await openSse(`${base}/${crashed}`);
      await sse2.ended;
      expect(sse2.events.at(-1)).toEqual({ id: '2', event: 'error', data: '{"error":{"code":-32603,"message":"Internal error"}}' });
      expect(sse2.raw).not.toContain('hunter2');
      expect(t.logger.text('error')).toContain('hunter2');
    });

    it('streams an Observable handler', async () => {
      const id = await start('jobs.observable');
      const sse = await openSse(`${base}/${id}`);
      await sse.ended;
      expect(sse.events.map((e) => [e.event, e.data])).toEqual([
        ['chunk', '{"tick":0}'],
        ['chunk', '{"tick":1}'],
        ['chunk', '{"tick":2}'],
        ['done', '{}'],
      ]);
    });

    it('answers 404 (unknown or forged id), 400 (bad cursor) with JSON bodies', async () => {
      const id = await start('jobs.count', { n: 2 });
      await eventually(async () => (await statusOf(id)).length === 3);
      const notFound = { error: { code: -32002, message: 'Stream not found' } };
      for (const forged of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid', id.toUpperCase(), `${id}x`, 'x'.repeat(300), '..%2F..%2Fetc%2Fpasswd']) {
        const res = await getJson(`/rpc/streams/${forged}`);
        expect([forged, res.status, res.body]).toEqual([forged, 404, notFound]);
        expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      }
      for (const cursor of ['-1', 'abc', '1.5', '1e3', '+2', '2 3', '99999999999999999999', '0x1']) {
        const res = await getJson(`/rpc/streams/${id}`, { 'last-event-id': cursor });
        expect([cursor, res.status]).toEqual([cursor, 400]);
        expect(res.body.error.code).toBe(-32602);
        expect(res.body.error.message).toMatch(/^Last-Event-ID must be a non-negative integer/);
      }
      const query = await getJson(`/rpc/streams/${id}?last_event_id=nope`);
      expect(query.status).toBe(400);
      const tooFar = await getJson(`/rpc/streams/${id}`, { 'last-event-id': '4' });
      expect(tooFar).toMatchObject({ status: 400, body: { error: { code: -32602, message: 'Last event id 4 is out of range: the stream has 3 event(s)' } } });
    });
  });

  describe('events page, list, cancel', () => {
    it('GET <path>/:id/events pages with after and limit, validating both', async () => {
      const id = await start('jobs.count', { n: 12 });
      await eventually(async () => (await statusOf(id)).length === 13);
      const page = await getJson(`/rpc/streams/${id}/events?after=8&limit=3`);
      expect(page.status).toBe(200);
      expect(page.body).toEqual({
        events: [
          { id: 9, event: 'chunk', data: { i: 9 } },
          { id: 10, event: 'progress', data: { percent: (10 / 12) * 100 } },
          { id: 11, event: 'chunk', data: { i: 11 } },
        ],
      });
      expect((await getJson(`/rpc/streams/${id}/events?after=13`)).body).toEqual({ events: [] });
      for (const q of ['after=-1', 'after=x', 'limit=0', 'limit=1001', 'after=14', 'after=1&after=2']) {
        const res = await getJson(`/rpc/streams/${id}/events?${q}`);
        expect([q, res.status, res.body.error.code]).toEqual([q, 400, -32602]);
      }
    });

    it('lists the caller\'s streams, filtered by status', async () => {
      const alice = { 'x-user': 'alice' };
      const done = await start('jobs.count', { n: 1 }, alice);
      const { id: running, feed } = await startManual(alice);
      await startManual({ 'x-user': 'bob' });
      await eventually(async () => (await statusOf(done, alice)).length === 2);
      const all = await getJson('/rpc/streams', alice);
      expect(all.status).toBe(200);
      expect(all.body.streams.map((s: any) => s.stream_id).sort()).toEqual([done, running].sort());
      const entry = all.body.streams.find((s: any) => s.stream_id === done);
      expect(entry).toEqual({
        stream_id: done,
        method: 'jobs.count',
        status: 'completed',
        events: 2,
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        completed_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      });
      expect((await getJson('/rpc/streams?status=running', alice)).body.streams.map((s: any) => s.stream_id)).toEqual([running]);
      expect((await getJson('/rpc/streams?status=completed', alice)).body.streams.map((s: any) => s.stream_id)).toEqual([done]);
      expect((await getJson('/rpc/streams?status=bogus', alice)).status).toBe(400);
      expect((await getJson('/rpc/streams')).body).toEqual({ streams: [] });
      feed.end();
    });

    it('DELETE cancels: the signal aborts, a terminal cancelled event reaches subscribers, idempotent', async () => {
      const { id, feed } = await startManual();
      const sse = await openSse(`${base}/${id}`);
      feed.push({ a: 1 });
      await sse.waitForEvents(1);
      const res = await getJson(`/rpc/streams/${id}`, {}, 'DELETE');
      expect(res).toMatchObject({ status: 200, body: { stream_id: id, status: 'cancelled' } });
      await sse.ended;
      expect(sse.events).toEqual([
        { id: '1', event: 'chunk', data: '{"a":1}' },
        { id: '2', event: 'cancelled', data: '{}' },
      ]);
      await eventually(() => feed.aborted && feed.finallyRan, 2000, 'the producer to stop');
      const again = await getJson(`/rpc/streams/${id}`, {}, 'DELETE');
      expect(again).toMatchObject({ status: 200, body: { stream_id: id, status: 'cancelled' } });
      // Rows the producer yields after the cancel are never stored.
      feed.push({ late: true });
      await sleep(20);
      expect((await statusOf(id)).map((e) => e.event)).toEqual(['chunk', 'cancelled']);
      expect((await getJson(`/rpc/streams/00000000-0000-4000-8000-000000000000`, {}, 'DELETE')).status).toBe(404);
    });

    it('DELETE on a finished stream answers its final status; concurrent DELETEs agree', async () => {
      const id = await start('jobs.count', { n: 1 });
      await eventually(async () => (await statusOf(id)).length === 2);
      expect((await getJson(`/rpc/streams/${id}`, {}, 'DELETE')).body).toEqual({ stream_id: id, status: 'completed' });
      const failed = await start('jobs.fail');
      await eventually(async () => (await statusOf(failed)).length === 3);
      expect((await getJson(`/rpc/streams/${failed}`, {}, 'DELETE')).body).toEqual({ stream_id: failed, status: 'failed' });

      const { id: raced, feed } = await startManual();
      feed.push(1, 2, 3);
      const answers = await Promise.all(Array.from({ length: 8 }, () => getJson(`/rpc/streams/${raced}`, {}, 'DELETE')));
      expect(answers.map((a) => [a.status, a.body.status])).toEqual(Array.from({ length: 8 }, () => [200, 'cancelled']));
      const events = await statusOf(raced);
      expect(events.filter((e) => e.event === 'cancelled')).toHaveLength(1);
      expect(events.at(-1)!.event).toBe('cancelled');
      expect(events.map((e) => e.id)).toEqual(events.map((_, k) => k + 1));
    });

    it('DELETE racing completion: exactly one terminal event, and DELETE reports the one that won', async () => {
      for (let round = 0; round < 10; round++) {
        const { id, feed } = await startManual();
        feed.push({ round });
        const [answer] = await Promise.all([getJson(`/rpc/streams/${id}`, {}, 'DELETE'), Promise.resolve().then(() => feed.end())]);
        await eventually(async () => ['done', 'cancelled'].includes((await statusOf(id)).at(-1)?.event ?? ''));
        const events = await statusOf(id);
        const terminals = events.filter((e) => ['done', 'cancelled', 'error'].includes(e.event));
        expect(terminals).toHaveLength(1);
        expect(answer.body.status).toBe(terminals[0].event === 'done' ? 'completed' : 'cancelled');
      }
    });
  });

  describe('who may see what', () => {
    it('another user\'s stream does not exist for you; anonymous streams belong to whoever holds the id', async () => {
      const { id, feed } = await startManual({ 'x-user': 'carol' });
      const notFound = { error: { code: -32002, message: 'Stream not found' } };
      for (const headers of [{ 'x-user': 'mallory' }, {}] as Array<Record<string, string>>) {
        expect(await getJson(`/rpc/streams/${id}`, headers)).toMatchObject({ status: 404, body: notFound });
        expect(await getJson(`/rpc/streams/${id}/events`, headers)).toMatchObject({ status: 404, body: notFound });
        expect(await getJson(`/rpc/streams/${id}`, headers, 'DELETE')).toMatchObject({ status: 404, body: notFound });
        expect((await getJson('/rpc/streams', headers)).body.streams.map((s: any) => s.stream_id)).not.toContain(id);
      }
      expect(feed.aborted).toBe(false);
      const own = await openSse(`${base}/${id}`, { headers: { 'x-user': 'carol' } });
      expect(own.status).toBe(200);
      feed.end();
      await own.ended;

      const anon = await startManual();
      const other = await openSse(`${base}/${anon.id}`, { headers: { 'x-user': 'mallory' } });
      expect(other.status).toBe(200);
      anon.feed.end();
      await other.ended;
    });

    it('roles are re-checked on every GET and DELETE', async () => {
      const admin = { 'x-user': 'dave', 'x-roles': 'admin' };
      const denied = await t.rpc({ jsonrpc: '2.0', method: 'jobs.admin', id: 1 }, { headers: { 'x-user': 'dave' } });
      expect(denied.body.error).toEqual({ code: -32001, message: 'One of the following roles is required: admin' });
      const id = await start('jobs.admin', undefined, admin);
      const feed = await eventually(() => feeds.get(id));
      const demoted = { 'x-user': 'dave' };
      const forbidden = { error: { code: -32001, message: 'One of the following roles is required: admin' } };
      expect(await getJson(`/rpc/streams/${id}`, demoted)).toMatchObject({ status: 403, body: forbidden });
      expect(await getJson(`/rpc/streams/${id}/events`, demoted)).toMatchObject({ status: 403, body: forbidden });
      expect(await getJson(`/rpc/streams/${id}`, demoted, 'DELETE')).toMatchObject({ status: 403, body: forbidden });
      expect((await getJson('/rpc/streams', demoted)).body.streams.map((s: any) => s.stream_id)).not.toContain(id);
      expect(feed.aborted).toBe(false);
      expect((await getJson(`/rpc/streams/${id}`, admin, 'DELETE')).body).toEqual({ stream_id: id, status: 'cancelled' });
    });

    it('maxRunning.perUser answers -32003 with data {limit}; a finished stream frees a slot', async () => {
      const erin = { 'x-user': 'erin' };
      const started: Array<{ id: string; feed: ManualFeed }> = [];
      for (let i = 0; i < 3; i++) started.push(await startManual(erin));
      const over = await t.rpc({ jsonrpc: '2.0', method: 'jobs.manual', id: 9 }, { headers: erin });
      expect(over.body).toEqual({
        jsonrpc: '2.0',
        error: { code: -32003, message: 'Too many running durable streams: the limit is 3 per user', data: { limit: 3 } },
        id: 9,
      });
      expect(over.headers.get('retry-after')).toBeNull();
      // Others are not affected by erin's quota.
      const frank = await startManual({ 'x-user': 'frank' });
      frank.feed.end();
      started[0].feed.end();
      await eventually(async () => (await statusOf(started[0].id, erin)).at(-1)?.event === 'done');
      const again = await startManual(erin);
      for (const s of [...started.slice(1), again]) s.feed.end();
    });
  });

  it('the service reports nothing left running once every stream ended', async () => {
    const service = t.app.get(DurableStreamRunner);
    for (const feed of feeds.values()) feed.end();
    await eventually(() => service.runningHere === 0, 3000, 'all runs to end');
  });
});

describe('DurableStreamRunner.follow (what the live /rpc/stream route builds on)', () => {
  const tmp = tempDir();
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(durableModule({ durable: { enabled: true, store: new SqliteStreamStore({ filename: tmp.file() }) } }));
  });
  afterAll(async () => {
    await t.close();
    tmp.remove();
  });

  it('yields committed {id, event, data} from a cursor to the terminal event; leaving early cancels nothing', async () => {
    const res = await t.rpc({ jsonrpc: '2.0', method: 'jobs.manual', id: 1 });
    const id = res.body.result.stream_id;
    const feed = await eventually(() => feeds.get(id));
    const service = t.app.get(DurableStreamRunner);
    feed.push({ a: 1 }, { a: 2 });
    const early = service.follow(id, 0);
    const first = await early.next();
    expect(first.value).toEqual({ id: 1, event: 'chunk', data: '{"a":1}' });
    await early.return();
    feed.push({ a: 3 });
    feed.end();
    const seen = [];
    for await (const event of service.follow(id, 1)) seen.push(event);
    expect(seen).toEqual([
      { id: 2, event: 'chunk', data: '{"a":2}' },
      { id: 3, event: 'chunk', data: '{"a":3}' },
      { id: 4, event: 'done', data: '{}' },
    ]);
    expect(feed.aborted).toBe(false);
  });
});
