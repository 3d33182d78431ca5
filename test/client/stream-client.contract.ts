/**
 * The stream and attach behaviour of @nest-jsonrpc/client, as suites that take a target server.
 * The e2e specs run them against the WireProtocolFixture; pointing them at the real streaming and
 * durable server only needs a `StreamTarget` whose methods behave as documented below.
 */
import {
  JsonRpcClient,
  JsonRpcError,
  type DurableStreamEvent,
} from '@nest-jsonrpc/client';

export type WireFormat = 'ndjson' | 'sse' | 'json';

export interface StreamTarget {
  /** The JSON-RPC endpoint (`<base>/rpc`); the stream and durable routes hang below it. */
  rpcUrl(): string;
  /** A method streaming rows `{i}` for i < params.count, then ending normally. */
  rowsMethod(format: WireFormat): string;
  /** A method streaming rows `{i}` for i < params.after, then an error frame -32002 "Row gone" with data `{after}`. */
  failMethod(format: WireFormat): string;
  /** A method streaming rows `{i}` until the client leaves. */
  endlessMethod(format: WireFormat): string;
  /** Resolves once the server has seen the client of `method` leave (its signal aborted). */
  waitForClientLeft(method: string): Promise<void>;
  /** A method whose rows are base64 `result_chunk` rows of params.text (params.size bytes each) then `{done:true}`. */
  chunksMethod?: string;
  /** Starts a durable stream of params.events rows (chunk/progress) ending with `done`; resolves its id. */
  startDurable?(client: JsonRpcClient, params: { events: number; end?: 'done' | 'error' | 'never'; dropEvery?: number; replayOverlap?: number }): Promise<string>;
}

export const FORMATS: WireFormat[] = ['ndjson', 'sse', 'json'];

/** `capabilities` says which optional parts the target has; the suites for the others are not defined. */
export function describeStreamClient(name: string, target: () => StreamTarget, capabilities: { chunks: boolean; durable: boolean }): void {
  describe(`${name}: client.stream()`, () => {
    const client = () => new JsonRpcClient({ url: target().rpcUrl() });

    describe.each(FORMATS)('%s', (format) => {
      it('yields every row in order and ends', async () => {
        const stream = client().stream<{ i: number }>(target().rowsMethod(format), { count: 50 });
        const rows = await stream.toArray();
        expect(rows).toEqual(Array.from({ length: 50 }, (_, i) => ({ i })));
        expect(stream.endReason).toBe(format === 'ndjson' ? 'eof' : 'end');
      });

      it('an empty stream yields nothing and ends', async () => {
        expect(await client().stream(target().rowsMethod(format), { count: 0 }).toArray()).toEqual([]);
      });

      it('an in-band error frame throws JsonRpcError after the rows before it were yielded', async () => {
        const seen: unknown[] = [];
        let error: unknown;
        try {
          for await (const row of client().stream(target().failMethod(format), { after: 3 })) seen.push(row);
        } catch (e) {
          error = e;
        }
        expect(seen).toEqual([{ i: 0 }, { i: 1 }, { i: 2 }]);
        expect(error).toBeInstanceOf(JsonRpcError);
        expect(error).toMatchObject({ code: -32002, message: 'Row gone', data: { after: 3 } });
      });

      it('an error frame before any row still throws on the first next()', async () => {
        const stream = client().stream(target().failMethod(format), { after: 0 });
        await expect(stream.next()).rejects.toMatchObject({ name: 'JsonRpcError', code: -32002 });
      });

      it('break closes the request: the server sees the client leave', async () => {
        const method = target().endlessMethod(format);
        const rows: unknown[] = [];
        for await (const row of client().stream(method, {})) {
          rows.push(row);
          if (rows.length === 3) break;
        }
        expect(rows).toEqual([{ i: 0 }, { i: 1 }, { i: 2 }]);
        await target().waitForClientLeft(method);
      });

      it('aborting the signal rejects the pending next() with the abort reason and closes the request', async () => {
        const method = target().endlessMethod(format);
        const controller = new AbortController();
        const stream = client().stream(method, {}, { signal: controller.signal });
        expect((await stream.next()).value).toEqual({ i: 0 });
        const reason = new Error('user went away');
        setTimeout(() => controller.abort(reason), 30);
        let error: unknown;
        try {
          for (;;) if ((await stream.next()).done) break;
        } catch (e) {
          error = e;
        }
        expect(error).toBe(reason);
        await target().waitForClientLeft(method);
      });
    });

    it('a pre-stream error (unknown method) rejects on the first next() with JsonRpcError and its HTTP status', async () => {
      const stream = client().stream('no.such.method', {});
      let error: unknown;
      try {
        await stream.next();
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(JsonRpcError);
      expect(error).toMatchObject({ code: -32601, status: 404 });
    });

    it('no request is sent before iteration starts', async () => {
      const calls: string[] = [];
      const spying = new JsonRpcClient({ url: target().rpcUrl(), fetch: (input, init) => (calls.push(String(input)), fetch(input, init)) });
      const stream = spying.stream(target().rowsMethod('ndjson'), { count: 1 });
      await new Promise((r) => setTimeout(r, 20));
      expect(calls).toEqual([]);
      expect(await stream.toArray()).toEqual([{ i: 0 }]);
      expect(calls).toEqual([spying.streamUrl]);
    });

    if (capabilities.chunks) it('collects a whole chunked result', async () => {
      const method = target().chunksMethod!;
      const text = 'binary-safe ✓ ' + 'x'.repeat(1000) + ' 😀 end';
      const others: unknown[] = [];
      const collected = await client().stream(method, { text, size: 97 }).collectResultText({ onRow: (row) => others.push(row) });
      expect(collected).toBe(text);
      expect(others).toEqual([{ done: true }]);
      const bytes = await client().stream(method, { text, size: 97 }).collectResult();
      expect(new TextDecoder().decode(bytes)).toBe(text);
    });
  });

  if (!capabilities.durable) return;
  describe(`${name}: durable streams`, () => {
    const client = () => new JsonRpcClient({ url: target().rpcUrl() });
    const start = (params: Parameters<NonNullable<StreamTarget['startDurable']>>[1]) => target().startDurable!(client(), params);
    const expected = (n: number) =>
      Array.from({ length: n }, (_, k) => (k % 4 === 3 ? { id: k + 1, event: 'progress', data: k / n } : { id: k + 1, event: 'chunk', data: { i: k } }));

    it('attach yields every event once, in order, ending after `done`', async () => {
      const id = await start({ events: 12 });
      const events: DurableStreamEvent[] = [];
      for await (const e of client().attach(id)) events.push(e);
      expect(events.slice(0, 12)).toEqual(expected(12));
      expect(events[12]).toEqual({ id: 13, event: 'done', data: { rows: 12 } });
      expect(events).toHaveLength(13);
    });

    it('resumes across forced disconnects with Last-Event-ID: exactly once, in order', async () => {
      const id = await start({ events: 30, dropEvery: 7 });
      const attachment = client().attach(id, { reconnect: { initialDelayMs: 5 } });
      const events: DurableStreamEvent[] = [];
      for await (const e of attachment) events.push(e);
      expect(events.map((e) => e.id)).toEqual(Array.from({ length: 31 }, (_, k) => k + 1));
      expect(events.slice(0, 30)).toEqual(expected(30));
      expect(attachment.connections).toBeGreaterThanOrEqual(5);
    });

    it('skips events the server replays again after a reconnect', async () => {
      const id = await start({ events: 20, dropEvery: 6, replayOverlap: 3 });
      const events: DurableStreamEvent[] = [];
      for await (const e of client().attach(id, { reconnect: { initialDelayMs: 5 } })) events.push(e);
      expect(events.map((e) => e.id)).toEqual(Array.from({ length: 21 }, (_, k) => k + 1));
    });

    it('lastEventId resumes after that event; at the terminal event it ends at once (204)', async () => {
      const id = await start({ events: 8 });
      const all: DurableStreamEvent[] = [];
      for await (const e of client().attach(id)) all.push(e);
      const rest: DurableStreamEvent[] = [];
      for await (const e of client().attach(id, { lastEventId: 5 })) rest.push(e);
      expect(rest).toEqual(all.slice(5));
      const none: DurableStreamEvent[] = [];
      for await (const e of client().attach(id, { lastEventId: String(all.length) })) none.push(e);
      expect(none).toEqual([]);
    });

    it('throws JsonRpcError on an `error` terminal, after the events before it', async () => {
      const id = await start({ events: 3, end: 'error' });
      const events: DurableStreamEvent[] = [];
      let error: unknown;
      try {
        for await (const e of client().attach(id)) events.push(e);
      } catch (e) {
        error = e;
      }
      expect(events).toEqual(expected(3));
      expect(error).toBeInstanceOf(JsonRpcError);
      expect(error).toMatchObject({ code: -32603, message: 'Report failed' });
    });

    it('cancel() ends attached clients with a `cancelled` marker; list() reports it; cancel is idempotent', async () => {
      const id = await start({ events: 1, end: 'never' });
      const c = client();
      const events: DurableStreamEvent[] = [];
      const watching = (async () => {
        for await (const e of c.attach(id)) {
          events.push(e);
          if (e.event === 'chunk') await c.cancel(id);
        }
      })();
      await watching;
      expect(events.map((e) => e.event)).toEqual(['chunk', 'cancelled']);
      expect(await c.cancel(id)).toEqual({ stream_id: id, status: 'cancelled' });
      const listed = await c.list({ status: 'cancelled' });
      expect(listed.map((s) => s.stream_id)).toContain(id);
      expect(listed.find((s) => s.stream_id === id)).toMatchObject({ status: 'cancelled', events: 2 });
    });

    it('events() reads stored events without SSE, with after and limit', async () => {
      const id = await start({ events: 6 });
      for await (const e of client().attach(id)) void e; // wait for the end
      expect(await client().events(id, { after: 2, limit: 3 })).toEqual(expected(6).slice(2, 5));
      expect((await client().events(id)).map((e) => e.id)).toEqual([1, 2, 3, 4, 5, 6, 7]);
      await expect(client().events('00000000-0000-4000-8000-000000000000')).rejects.toMatchObject({ name: 'JsonRpcError', status: 404 });
    });

    it('an unknown stream id is a JsonRpcError with status 404, not retried', async () => {
      const attachment = client().attach('00000000-0000-4000-8000-000000000000');
      await expect(attachment.next()).rejects.toMatchObject({ name: 'JsonRpcError', status: 404 });
      expect(attachment.connections).toBe(1);
    });

    it('break leaves the durable stream running; a later attach resumes from lastEventId', async () => {
      const id = await start({ events: 10 });
      const first = client().attach(id);
      for await (const e of first) if (e.id === 4) break;
      expect(first.lastEventId).toBe(4);
      const rest: number[] = [];
      for await (const e of client().attach(id, { lastEventId: first.lastEventId })) rest.push(e.id);
      expect(rest).toEqual([5, 6, 7, 8, 9, 10, 11]);
    });
  });
}

