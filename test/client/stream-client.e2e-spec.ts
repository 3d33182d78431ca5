/**
 * client.stream() and client.attach() over real sockets against the WireProtocolFixture (a
 * node:http server writing docs/streaming.md's frames byte for byte), plus what only a misbehaving server can show:
 * death mid-stream, hostile bodies, wrong content types, silence, real UTF-8 splits on the wire.
 */
import {
  JsonRpcClient,
  JsonRpcProtocolError,
  JsonRpcResponseTooLargeError,
  JsonRpcStreamTruncatedError,
  JsonRpcTimeoutError,
  JsonRpcTransportError,
} from '@nest-jsonrpc/client';
import { describeStreamClient, FORMATS, type StreamTarget } from './stream-client.contract.js';
import { WireProtocolFixture } from './wire-protocol-fixture.js';
import { refusedUrl, rejection } from './test-helpers.js';

const fixture = new WireProtocolFixture();
beforeAll(() => fixture.start());
afterAll(() => fixture.close());

async function waitFor(condition: () => boolean, what: string, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const fixtureTarget: StreamTarget = {
  rpcUrl: () => `${fixture.baseUrl}/rpc`,
  rowsMethod: (f) => `test.rows.${f}`,
  failMethod: (f) => `test.fail.${f}`,
  endlessMethod: (f) => `test.endless.${f}`,
  chunksMethod: 'test.chunks.ndjson',
  async waitForClientLeft(method) {
    await waitFor(() => fixture.observed.clientsLeft.includes(method), `the fixture to see the ${method} client leave`);
    fixture.observed.clientsLeft.splice(fixture.observed.clientsLeft.indexOf(method), 1);
  },
  async startDurable(client, params) {
    const started = await client.call<{ stream_id: string; sse_url: string; status: string }>('test.durable.start', params);
    expect(started).toEqual({ stream_id: expect.any(String), sse_url: `/rpc/streams/${started.stream_id}`, status: 'running' });
    return started.stream_id;
  },
};

describeStreamClient('protocol fixture', () => fixtureTarget, { chunks: true, durable: true });

describe('protocol fixture: what only a misbehaving server can show', () => {
  const client = (options: Partial<ConstructorParameters<typeof JsonRpcClient>[0]> = {}) =>
    new JsonRpcClient({ url: `${fixture.baseUrl}/rpc`, ...options });

  it.each(FORMATS)('%s: a server that dies mid-stream gives JsonRpcStreamTruncatedError after the rows it sent', async (format) => {
    const rows: unknown[] = [];
    let error: unknown;
    try {
      for await (const row of client().stream(`test.die.${format}`, { after: 4 })) rows.push(row);
    } catch (e) {
      error = e;
    }
    expect(rows).toEqual([{ i: 0 }, { i: 1 }, { i: 2 }, { i: 3 }]);
    expect(error).toBeInstanceOf(JsonRpcStreamTruncatedError);
    expect(error).toBeInstanceOf(JsonRpcTransportError);
    expect((error as JsonRpcStreamTruncatedError).rowsReceived).toBe(4);
  });

  it('a row split inside a UTF-8 character across two network writes arrives whole', async () => {
    expect(await client().stream('test.unicode.ndjson').toArray()).toEqual([{ text: 'a😀b' }]);
  });

  it('rows arrive as they are written, not at the end', async () => {
    const stream = client().stream<{ i: number }>('test.rows.json', { count: 3, delayMs: 150 });
    const t0 = Date.now();
    expect((await stream.next()).value).toEqual({ i: 0 });
    // Long before the stream's end (>= 300 ms): at the end would be buffering; the slack is for a loaded CI machine.
    expect(Date.now() - t0).toBeLessThan(250);
    expect(await stream.toArray()).toEqual([{ i: 1 }, { i: 2 }]);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
  });

  it('a never-ending line (the 10 GB line) fails with JsonRpcResponseTooLargeError once maxFrameBytes is passed, and closes the request', async () => {
    const rssBefore = process.memoryUsage().rss;
    let error: unknown;
    try {
      await client({ maxFrameBytes: 1024 * 1024 }).stream('test.hugeline.ndjson').toArray();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(JsonRpcResponseTooLargeError);
    expect((error as JsonRpcResponseTooLargeError).limitBytes).toBe(1024 * 1024);
    expect((error as Error).message).toBe('NDJSON stream: line 1 exceeds maxFrameBytes (1048576 bytes); the client stopped reading');
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(64 * 1024 * 1024);
    await fixtureTarget.waitForClientLeft('test.hugeline.ndjson');
  });

  it('garbage bytes are a JsonRpcProtocolError', async () => {
    await expect(client().stream('test.garbage.ndjson').toArray()).rejects.toBeInstanceOf(JsonRpcProtocolError);
  });

  it('a wrong content type is a JsonRpcProtocolError naming it, before any row', async () => {
    const error = await rejection(client().stream('test.html').next());
    expect(error).toBeInstanceOf(JsonRpcProtocolError);
    expect(error.message).toBe(
      'expected a stream (application/x-ndjson, text/event-stream, application/json), got Content-Type "text/html"',
    );
    expect(error.status).toBe(200);
  });

  it('a silent server is stopped by idleTimeoutMs with JsonRpcTimeoutError, and the request is closed', async () => {
    const t0 = Date.now();
    const error = await rejection(client({ idleTimeoutMs: 150 }).stream('test.silent.ndjson').next());
    expect(error).toBeInstanceOf(JsonRpcTimeoutError);
    expect(error.message).toBe(`no data from ${fixture.baseUrl}/rpc/stream for 150 ms (idleTimeoutMs)`);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(145);
    await fixtureTarget.waitForClientLeft('test.silent.ndjson');
  });

  it('idleTimeoutMs does not fire while rows keep coming', async () => {
    // The stream lasts longer than idleTimeoutMs (5 × 300 ms against 1000 ms); each gap is well inside it,
    // with room for a loaded machine (a 100 ms bound against 40 ms gaps fired once under CI).
    const rows = await client({ idleTimeoutMs: 1000 }).stream('test.rows.sse', { count: 5, delayMs: 300 }).toArray();
    expect(rows).toHaveLength(5);
  });

  it('a refused connection is a JsonRpcTransportError', async () => {
    const refused = await refusedUrl('/rpc');
    const error = await rejection(new JsonRpcClient({ url: refused }).stream('x').next());
    expect(error).toBeInstanceOf(JsonRpcTransportError);
    expect(error.message).toBe(`POST ${refused}/stream failed: fetch failed (connect ECONNREFUSED ${refused.slice(7, -4)})`);
  });

  it('a stream whose collected result has a second result id fails naming it', async () => {
    // Two `collectResult` rounds on one fixture method: a second id is refused unless picked.
    const stream = client().stream('test.chunks.ndjson', { text: 'abc', size: 1 });
    expect(await stream.collectResultText({ resultId: 'file-1' })).toBe('abc');
    await expect(client().stream('test.rows.ndjson', { count: 2 }).collectResult()).rejects.toThrow(
      'the stream ended without any result_chunk row (result_id undefined, chunk_seq none)',
    );
  });

  it('attach gives up after maxAttempts failed reconnects with a JsonRpcTransportError', async () => {
    const refused = await refusedUrl('/rpc');
    const attachment = new JsonRpcClient({ url: refused }).attach('abc', {
      reconnect: { initialDelayMs: 1, maxDelayMs: 5, maxAttempts: 3 },
    });
    const error = await rejection(attachment.next());
    expect(error).toBeInstanceOf(JsonRpcTransportError);
    expect(error.message).toBe(
      `gave up on ${refused}/streams/abc after 3 failed reconnects: GET ${refused}/streams/abc failed: fetch failed (connect ECONNREFUSED ${refused.slice(7, -4)})`,
    );
    expect(attachment.connections).toBe(4);
  });

  it('attach: aborting the signal during the reconnect wait rejects at once with the reason', async () => {
    const controller = new AbortController();
    const attachment = new JsonRpcClient({ url: await refusedUrl('/rpc') }).attach('abc', {
      signal: controller.signal,
      reconnect: { initialDelayMs: 60_000 },
    });
    setTimeout(() => controller.abort(new Error('stop')), 50);
    const t0 = Date.now();
    await expect(attachment.next()).rejects.toThrow('stop');
    expect(Date.now() - t0).toBeLessThan(1000);
  });

  it('attach: the cursor sent on each reconnect is the last event yielded', async () => {
    const started = await client().call<{ stream_id: string }>('test.durable.start', { events: 9, dropEvery: 4 });
    const ids: number[] = [];
    const sent: Array<[string | null, number | undefined]> = [];
    const watching = client({
      fetch: (input, init) => {
        sent.push([new Headers(init?.headers).get('last-event-id'), ids.at(-1)]);
        return fetch(input, init);
      },
    });
    for await (const e of watching.attach(started.stream_id, { reconnect: { initialDelayMs: 1 } })) ids.push(e.id);
    expect(ids).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(sent.length).toBeGreaterThanOrEqual(3);
    expect(sent[0]).toEqual([null, undefined]);
    for (const [header, last] of sent.slice(1)) expect(header).toBe(String(last));
  });

  it('attach rejects a malformed lastEventId synchronously', () => {
    expect(() => client().attach('x', { lastEventId: '5; drop' })).toThrow('lastEventId must be a non-negative integer, got "5; drop"');
  });
});
