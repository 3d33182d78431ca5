/**
 * The durable routes' small things: a repeated query parameter gets its own
 * message; a cursor with leading zeros (`Last-Event-ID: 00`) means what the number means,
 * everywhere a cursor or count is read; other verbs on a stream id (and on the list and events
 * routes) answer 405 with `Allow`.
 */
import { MemoryStreamStore } from '@nest-jsonrpc/server';
import { eventually } from '../support/async.js';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';
import { durableModule, headerAuth } from '../durable/support/durable-fixtures.js';
import { openSse } from '../durable/support/sse-client.js';

describe('durable routes: repeated parameters, leading zeros, 405', () => {
  let t: TestApp;
  let id: string;

  const getJson = async (path: string, headers: Record<string, string> = {}, method = 'GET') => {
    const res = await fetch(`${t.url}${path}`, { method, headers });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
  };

  beforeAll(async () => {
    t = await startTestApp(durableModule({ durable: { enabled: true, store: new MemoryStreamStore() } }), headerAuth);
    const started = await t.rpc({ jsonrpc: '2.0', method: 'jobs.count', params: { n: 3 }, id: 1 });
    id = started.body.result.stream_id;
    await eventually(async () => (await getJson(`/rpc/streams/${id}/events`)).body.events.length === 4);
  });
  afterAll(() => t.close());

  it.each([
    ['limit', `/events?limit=2&limit=3`],
    ['after', `/events?after=1&after=2`],
    ['last_event_id', `?last_event_id=1&last_event_id=2`],
  ])('a repeated %s query parameter: 400 "<name> was given more than once"', async (name, suffix) => {
    const res = await getJson(`/rpc/streams/${id}${suffix}`);
    expect(res).toMatchObject({ status: 400, body: { error: { code: -32602, message: `${name} was given more than once` } } });
  });

  it('a repeated status on the list route: its own message too', async () => {
    const res = await getJson('/rpc/streams?status=running&status=completed');
    expect(res).toMatchObject({ status: 400, body: { error: { code: -32602, message: 'status was given more than once' } } });
  });

  it('a bad limit still gets the range message', async () => {
    const res = await getJson(`/rpc/streams/${id}/events?limit=0`);
    expect(res.body).toEqual({ error: { code: -32602, message: 'limit must be an integer from 1 to 1000' } });
  });

  it('Last-Event-ID: 00 is read as 0 (the whole stream), like 0', async () => {
    for (const cursor of ['0', '00', '000']) {
      const sse = await openSse(`${t.url}/rpc/streams/${id}`, { headers: { 'last-event-id': cursor } });
      expect(sse.status).toBe(200);
      await sse.ended;
      expect([cursor, sse.events.map((e) => e.id)]).toEqual([cursor, ['1', '2', '3', '4']]);
    }
  });

  it('leading zeros mean the number in Last-Event-ID, last_event_id, after and limit alike', async () => {
    const sse = await openSse(`${t.url}/rpc/streams/${id}`, { headers: { 'last-event-id': '02' } });
    await sse.ended;
    expect(sse.events.map((e) => e.id)).toEqual(['3', '4']);
    const query = await openSse(`${t.url}/rpc/streams/${id}?last_event_id=003`);
    await query.ended;
    expect(query.events.map((e) => e.id)).toEqual(['4']);
    const page = await getJson(`/rpc/streams/${id}/events?after=01&limit=002`);
    expect(page.body.events.map((e: { id: number }) => e.id)).toEqual([2, 3]);
    // Still digits only: a sign, an exponent or 16 significant digits are refused.
    for (const cursor of ['-0', '0e0', '0x1', '1234567890123456']) {
      expect((await getJson(`/rpc/streams/${id}`, { 'last-event-id': cursor })).status).toBe(400);
    }
  });

  it.each(['POST', 'PUT', 'PATCH'])('%s on a stream id: 405 with Allow: GET, DELETE', async (method) => {
    const res = await getJson(`/rpc/streams/${id}`, {}, method);
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, DELETE');
    expect(res.body).toEqual({ error: { code: -32600, message: 'Method not allowed: use GET or DELETE' } });
  });

  it.each([
    ['POST', '/rpc/streams'],
    ['DELETE', '/rpc/streams'],
    ['PUT', `/rpc/streams/{id}/events`],
    ['DELETE', `/rpc/streams/{id}/events`],
  ])('%s %s: 405 with Allow: GET', async (method, path) => {
    const res = await getJson(path.replace('{id}', id), {}, method);
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET');
    expect(res.body).toEqual({ error: { code: -32600, message: 'Method not allowed: use GET' } });
  });

  it('deeper paths stay 404', async () => {
    expect((await getJson(`/rpc/streams/${id}/events/more`, {}, 'POST')).status).toBe(404);
  });

  it('every answer carries X-Request-Id, as on /rpc: list, page, cancel, refusals, the 204 of a finished stream', async () => {
    const headers = { 'x-request-id': 'durable-9' };
    const answers = [
      await getJson('/rpc/streams', headers),
      await getJson(`/rpc/streams/${id}/events`, headers),
      await getJson(`/rpc/streams/${id}`, { ...headers, 'last-event-id': '4' }),
      await getJson(`/rpc/streams/${id}`, headers, 'DELETE'),
      await getJson(`/rpc/streams/${id}`, headers, 'PUT'),
      await getJson('/rpc/streams/not-a-stream', headers),
      await getJson(`/rpc/streams/${id}/events?limit=0`, headers),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 200, 204, 200, 405, 404, 400]);
    for (const answer of answers) expect(answer.headers.get('x-request-id')).toBe('durable-9');
  });
});
