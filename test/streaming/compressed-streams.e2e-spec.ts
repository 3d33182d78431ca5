/**
 * Streams behind a compressing middleware: `app.use(compression())`, as Nest's docs set it up on
 * Express (on Fastify it runs through `@fastify/middie`). `compression` holds what is written in
 * its zlib stream until the response ends unless `res.flush()` is called, and SSE and JSON-array
 * bodies are compressible: each row must still reach the client while its producer runs — live
 * streams in every format, a durable attach, an SSE keep-alive comment — compressed, and whole at
 * the end; an MCP tool's progress too.
 */
import { randomBytes } from 'node:crypto';
import type { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { Injectable, Module } from '@nestjs/common';
import compression from 'compression';
import { JsonRpcModule, MemoryStreamStore, RpcMcp, RpcMethod, RpcStream, StreamFormat } from '@nest-jsonrpc/server';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';

/** Producers parked between their first and last row until the test opens their gate. */
class Gates {
  private readonly open = new Map<string, () => void>();
  private readonly waiting = new Map<string, Promise<void>>();

  wait(key: string): Promise<void> {
    let gate = this.waiting.get(key);
    if (!gate) this.waiting.set(key, (gate = new Promise((resolve) => this.open.set(key, resolve))));
    return gate;
  }

  release(key: string): void {
    void this.wait(key);
    this.open.get(key)!();
  }
}
const gates = new Gates();
let noiseStoppedNow: () => void;
const noiseStopped = new Promise<void>((resolve) => (noiseStoppedNow = resolve));

async function* gated(key: string) {
  yield { row: 1, key };
  await gates.wait(key);
  yield { row: 2, key };
}

@Injectable()
class GatedStreams {
  @RpcMethod('gated.sse')
  @RpcStream({ format: StreamFormat.Sse })
  sse(p: { key: string }) {
    return gated(p.key);
  }

  @RpcMethod('gated.array')
  @RpcStream({ format: StreamFormat.JsonArray })
  array(p: { key: string }) {
    return gated(p.key);
  }

  @RpcMethod('gated.ndjson')
  @RpcStream({ format: StreamFormat.Ndjson })
  ndjson(p: { key: string }) {
    return gated(p.key);
  }

  @RpcMethod('gated.durable')
  @RpcStream({ durable: true })
  durable(p: { key: string }) {
    return gated(p.key);
  }

  /** Endless incompressible rows (zlib cannot shrink them below the socket's buffers); says when it stopped. */
  @RpcMethod('noise')
  @RpcStream({ format: StreamFormat.Sse })
  async *noise() {
    try {
      for (;;) {
        yield randomBytes(12_000).toString('base64');
        await new Promise((resolve) => setImmediate(resolve));
      }
    } finally {
      noiseStoppedNow();
    }
  }

  /** Rows zlib cannot shrink, each longer than its 16 KiB buffer: every write is refused and waits for 'drain'. */
  @RpcMethod('bulky')
  @RpcStream({ format: StreamFormat.Sse })
  async *bulky(p: { count: number }) {
    for (let row = 0; row < p.count; row++) yield `${row}:${randomBytes(13_000).toString('base64')}`;
  }

  @RpcMethod('gated.tool')
  @RpcStream()
  @RpcMcp()
  tool(p: { key: string }) {
    return gated(p.key);
  }
}

@Module({
  imports: [
    JsonRpcModule.forRoot({
      stream: { enabled: true, keepAliveMs: 200 },
      limits: { stalledWriteMs: 300 },
      durable: { enabled: true, store: new MemoryStreamStore() },
      mcp: { enabled: true, name: 'compressed', version: '1.0.0' },
    }),
  ],
  providers: [GatedStreams],
})
class CompressedStreamsModule {}

/** Reads a fetch body as text (fetch undoes the gzip) until `done` holds; fails with what came if it never does. */
class BodyReader {
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private readonly decoder = new TextDecoder();
  text = '';

  constructor(response: Response) {
    this.reader = response.body!.getReader();
  }

  async until(done: (text: string) => boolean, what: string, timeoutMs = 5000): Promise<string> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not arrive within ${timeoutMs} ms; received: ${JSON.stringify(this.text)}`)), timeoutMs);
    });
    try {
      while (!done(this.text)) {
        const { value, done: ended } = await Promise.race([this.reader.read(), timedOut]);
        if (ended) throw new Error(`the body ended before ${what}; received: ${JSON.stringify(this.text)}`);
        this.text += this.decoder.decode(value, { stream: true });
      }
      return this.text;
    } catch (error) {
      // Leave nothing open behind a failure: the server sees the client go and stops the producer.
      await this.reader.cancel().catch(() => undefined);
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  /** The rest of the body, to its end. */
  async rest(): Promise<string> {
    for (;;) {
      const { value, done } = await this.reader.read();
      if (done) return this.text;
      this.text += this.decoder.decode(value, { stream: true });
    }
  }
}

/** An SSE body without its keep-alive comments (`:`), which a slow machine may interleave anywhere. */
const withoutComments = (text: string) => text.replaceAll(':\n\n', '');

const ROW_1 = (key: string) => `{"row":1,"key":"${key}"}`;
const ROW_2 = (key: string) => `{"row":2,"key":"${key}"}`;

describe('streams behind app.use(compression())', () => {
  let t: TestApp;
  let drains = 0;
  let mostDrainListeners = 0;
  beforeAll(async () => {
    t = await startTestApp(CompressedStreamsModule, (app) => {
      app.use(compression());
      // Behind compression, `res.on('drain')` reaches its zlib stream: the listener sees how many
      // 'drain' listeners that stream holds each time it drains.
      app.use((_req: unknown, res: ServerResponse, next: () => void) => {
        res.on('drain', function (this: EventEmitter) {
          drains++;
          mostDrainListeners = Math.max(mostDrainListeners, this.listenerCount('drain'));
        });
        next();
      });
    });
  });
  afterAll(() => t.close());

  const streamCall = (method: string, key: string) =>
    fetch(`${t.url}/rpc/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'accept-encoding': 'gzip' },
      body: JSON.stringify({ jsonrpc: '2.0', method, params: { key }, id: 1 }),
    });

  it.each([
    // text/event-stream and application/json are compressible; application/x-ndjson is not (compression's own rule).
    ['gated.sse', 'gzip', (k: string) => `data: ${ROW_1(k)}\n\n`, (k: string) => `data: ${ROW_1(k)}\n\ndata: ${ROW_2(k)}\n\nevent: end\ndata: {}\n\n`],
    ['gated.array', 'gzip', (k: string) => `[${ROW_1(k)}`, (k: string) => `[${ROW_1(k)},${ROW_2(k)}]`],
    ['gated.ndjson', null, (k: string) => `${ROW_1(k)}\n`, (k: string) => `${ROW_1(k)}\n${ROW_2(k)}\n`],
  ])('%s: the first row arrives while the producer waits (content-encoding %s), the whole body at the end', async (method, encoding, first, whole) => {
    const key = `${t.platform}-${method}`;
    const res = await streamCall(method, key);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-encoding')).toBe(encoding);
    const body = new BodyReader(res);
    await body.until((text) => withoutComments(text).startsWith(first(key)), 'the first row');
    gates.release(key);
    expect(withoutComments(await body.rest())).toBe(whole(key));
  });

  it('an SSE keep-alive comment arrives while the producer waits', async () => {
    const key = `${t.platform}-keep-alive`;
    const res = await streamCall('gated.sse', key);
    expect(res.headers.get('content-encoding')).toBe('gzip');
    const body = new BodyReader(res);
    await body.until((text) => text.startsWith(`data: ${ROW_1(key)}\n\n:\n\n`), 'the row then a keep-alive comment');
    gates.release(key);
    expect(await body.rest()).toMatch(new RegExp(`data: ${ROW_2(key).replace(/[{}]/g, '\\$&')}\n\nevent: end\ndata: \\{\\}\n\n$`));
  });

  it('a durable attach gets the first row while the producer waits', async () => {
    const key = `${t.platform}-durable`;
    const started = await t.rpc({ jsonrpc: '2.0', method: 'gated.durable', params: { key }, id: 1 });
    const id = started.body.result.stream_id as string;
    const res = await fetch(`${t.url}/rpc/streams/${id}`, { headers: { accept: 'text/event-stream', 'accept-encoding': 'gzip' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-encoding')).toBe('gzip');
    const body = new BodyReader(res);
    await body.until((text) => text.includes(`data: ${ROW_1(key)}\n\n`), 'the first row');
    gates.release(key);
    const whole = await body.rest();
    expect(whole).toContain(`data: ${ROW_2(key)}\n\n`);
    expect(whole.endsWith('event: end\ndata: {}\n\n')).toBe(true);
  });

  // The MCP SDK marks its event streams `Cache-Control: no-cache, no-transform`, which `compression`
  // honours: not compressed, and still not held back.
  it("an MCP stream tool's progress notification arrives while the producer waits (not compressed: no-transform)", async () => {
    const key = `${t.platform}-mcp`;
    const res = await fetch(`${t.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'accept-encoding': 'gzip' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'gated.tool', arguments: { key }, _meta: { progressToken: 'p' } } }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(res.headers.get('cache-control')).toBe('no-cache, no-transform');
    expect(res.headers.get('content-encoding')).toBeNull();
    const body = new BodyReader(res);
    await body.until((text) => text.includes('notifications/progress'), 'the progress notification');
    expect(body.text).not.toContain('"id":7');
    gates.release(key);
    const whole = await body.rest();
    const answer = whole
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice(6)))
      .find((message) => message.id === 7);
    expect(answer.result).toEqual({ content: [{ type: 'text', text: JSON.stringify([{ row: 1, key }, { row: 2, key }]) }] });
  });

  it('a stream whose writes keep waiting for drain leaves no listener behind per wait', async () => {
    const res = await fetch(`${t.url}/rpc/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'accept-encoding': 'gzip' },
      body: JSON.stringify({ jsonrpc: '2.0', method: 'bulky', params: { count: 40 }, id: 1 }),
    });
    expect(res.headers.get('content-encoding')).toBe('gzip');
    const rows = (await res.text()).split('\n\n').filter((frame) => frame.startsWith('data: "'));
    expect(rows.map((row) => row.slice(7, row.indexOf(':', 7)))).toEqual(Array.from({ length: 40 }, (_, i) => String(i)));
    expect(drains).toBeGreaterThanOrEqual(10); // rows may share a write; each write waits
    // The test's own listener and the stream's one; a `once` per refused write grew this by one per drain.
    expect(mostDrainListeners).toBe(2);
  });

  it('a reader that stops reading is still dropped after limits.stalledWriteMs, and the producer stopped', async () => {
    const socket = connect(Number(new URL(t.url).port), '127.0.0.1');
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    let head = '';
    const headersRead = new Promise<void>((resolve) => {
      const onData = (chunk: Buffer) => {
        head += chunk.toString('latin1');
        if (!head.includes('\r\n\r\n')) return;
        socket.pause(); // reads nothing more, ever
        socket.off('data', onData);
        resolve();
      };
      socket.on('data', onData);
    });
    const body = JSON.stringify({ jsonrpc: '2.0', method: 'noise', id: 1 });
    socket.write(`POST /rpc/stream HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    await headersRead;
    expect(head).toMatch(/\r\ncontent-encoding: gzip\r\n/i);
    await noiseStopped;
    socket.resume();
    await closed;
  });
});
