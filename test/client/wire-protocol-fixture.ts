/**
 * PROTOCOL FIXTURE — not the real server. A small node:http server that writes the wire format
 * of docs/streaming.md and docs/durable.md byte for byte, and can also misbehave on purpose (die mid-stream, send garbage, never
 * end a line, drop attached clients), which the real server cannot be made to do on demand.
 * The client suites run against it through `StreamTarget`, so the same suites can be pointed at
 * the real streaming/durable server by giving them another target.
 *
 * Methods on `POST /rpc/stream` (format by suffix: `.ndjson`, `.sse`, `.json`):
 *   test.rows.<f>      {count, delayMs?}   rows {i} then the format's end
 *   test.fail.<f>      {after}             `after` rows {i}, then error frame -32002 "Row gone" data {after}
 *   test.endless.<f>   {}                  rows {i} every 5 ms until the client leaves
 *   test.die.<f>       {after}             `after` rows, then the socket is destroyed (a crash)
 *   test.unicode.ndjson {}                 one row written in 2 writes split inside a 4-byte character
 *   test.chunks.ndjson {text, size}        `text` as base64 result_chunk rows of `size` bytes, then a row {done}
 *   test.hugeline.ndjson {}                an endless line that never ends (hostile)
 *   test.garbage.ndjson {}                 random bytes (hostile)
 *   test.html          {}                  200 text/html (wrong content type)
 *   test.silent.ndjson {}                  headers, then nothing, forever
 *   anything else                          404 {"jsonrpc":"2.0","error":{"code":-32601,...},"id":<id>}
 * Durable streams:
 *   POST /rpc test.durable.start {events, intervalMs?, end?: 'done'|'error', dropEvery?, replayOverlap?}
 *   GET /rpc/streams/:id (SSE, Last-Event-ID), GET /rpc/streams/:id/events, GET /rpc/streams, DELETE /rpc/streams/:id
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { randomUUID } from 'node:crypto';

type Format = 'ndjson' | 'sse' | 'json';

const CONTENT_TYPES: Record<Format, string> = {
  ndjson: 'application/x-ndjson',
  sse: 'text/event-stream',
  json: 'application/json',
};

interface DurableEvent {
  id: number;
  event: string;
  data: unknown;
}

interface DurableStream {
  id: string;
  method: string;
  status: 'running' | 'completed' | 'failed' | 'cancelled';
  events: DurableEvent[];
  subscribers: Set<(e: DurableEvent) => void>;
  dropEvery: number;
  replayOverlap: number;
  timer: ReturnType<typeof setInterval> | undefined;
  created_at: string;
  completed_at: string | null;
}

/** What the fixture saw, for assertions on the client's behaviour. */
export interface FixtureObservations {
  /** Stream requests whose client left before the stream ended, by method. */
  clientsLeft: string[];
  /** Rows written by test.endless before its client left. */
  endlessRowsWritten: number;
  /** `Last-Event-ID` of every attach request, in order (undefined: none). */
  attachCursors: Array<string | undefined>;
}

export class WireProtocolFixture {
  readonly observed: FixtureObservations = { clientsLeft: [], endlessRowsWritten: 0, attachCursors: [] };
  readonly streams = new Map<string, DurableStream>();
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private readonly timers = new Set<ReturnType<typeof setTimeout>>();
  baseUrl = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.route(req, res));
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.baseUrl = `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    for (const s of this.streams.values()) if (s.timer) clearInterval(s.timer);
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }

  private later(ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    this.timers.add(t);
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url!, 'http://x');
    if (req.method === 'POST' && url.pathname === '/rpc/stream') return this.stream(req, res, JSON.parse(await body(req)));
    if (req.method === 'POST' && url.pathname === '/rpc') return this.rpc(res, JSON.parse(await body(req)));
    if (url.pathname === '/rpc/streams' && req.method === 'GET') {
      const streams = [...this.streams.values()]
        .filter((s) => !url.searchParams.has('status') || s.status === url.searchParams.get('status'))
        .map((s) => ({ stream_id: s.id, method: s.method, status: s.status, events: s.events.length, created_at: s.created_at, completed_at: s.completed_at }));
      return json(res, 200, { streams });
    }
    const events = /^\/rpc\/streams\/([^/]+)\/events$/.exec(url.pathname);
    if (events && req.method === 'GET') {
      const s = this.streams.get(decodeURIComponent(events[1]));
      if (!s) return json(res, 404, { error: { code: -32002, message: 'Stream not found' } });
      const after = Number(url.searchParams.get('after') ?? 0);
      const limit = Number(url.searchParams.get('limit') ?? 1000);
      return json(res, 200, { events: s.events.slice(after, after + limit) });
    }
    const match = /^\/rpc\/streams\/([^/]+)$/.exec(url.pathname);
    const stream = match ? this.streams.get(decodeURIComponent(match[1])) : undefined;
    if (match && !stream) return json(res, 404, { error: { code: -32002, message: 'Stream not found' } });
    if (stream && req.method === 'DELETE') {
      if (stream.status === 'running') this.emit(stream, 'cancelled', {}, 'cancelled');
      return json(res, 200, { stream_id: stream.id, status: stream.status });
    }
    if (stream && req.method === 'GET') return this.attach(req, res, stream);
    json(res, 404, { message: 'no route' });
  }

  private rpc(res: ServerResponse, request: { method: string; params?: any; id?: number }): void {
    if (request.method !== 'test.durable.start') {
      return json(res, 200, { jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id: request.id ?? null });
    }
    const p = request.params ?? {};
    const stream: DurableStream = {
      id: randomUUID(),
      method: request.method,
      status: 'running',
      events: [],
      subscribers: new Set(),
      dropEvery: p.dropEvery ?? 0,
      replayOverlap: p.replayOverlap ?? 0,
      timer: undefined,
      created_at: new Date().toISOString(),
      completed_at: null,
    };
    this.streams.set(stream.id, stream);
    let produced = 0;
    stream.timer = setInterval(() => {
      if (stream.status !== 'running') return;
      if (produced < p.events) {
        const i = produced++;
        if (i % 4 === 3) this.emit(stream, 'progress', i / p.events);
        else this.emit(stream, 'chunk', { i });
        return;
      }
      if (p.end === 'error') this.emit(stream, 'error', { error: { code: -32603, message: 'Report failed' } }, 'failed');
      else if (p.end !== 'never') this.emit(stream, 'done', { rows: produced }, 'completed');
    }, p.intervalMs ?? 5);
    json(res, 200, { jsonrpc: '2.0', result: { stream_id: stream.id, sse_url: `/rpc/streams/${stream.id}`, status: 'running' }, id: request.id });
  }

  private emit(stream: DurableStream, event: string, data: unknown, final?: DurableStream['status']): void {
    const e = { id: stream.events.length + 1, event, data };
    stream.events.push(e);
    if (final) {
      stream.status = final;
      stream.completed_at = new Date().toISOString();
      clearInterval(stream.timer);
    }
    for (const s of stream.subscribers) s(e);
  }

  private attach(req: IncomingMessage, res: ServerResponse, stream: DurableStream): void {
    const header = req.headers['last-event-id'] as string | undefined;
    this.observed.attachCursors.push(header);
    let cursor = header === undefined ? 0 : Number(header);
    if (!Number.isInteger(cursor) || cursor < 0 || cursor > stream.events.length) {
      return json(res, 400, { error: { code: -32600, message: 'Invalid Last-Event-ID' } });
    }
    const terminal = stream.status !== 'running';
    if (terminal && cursor === stream.events.length) {
      res.writeHead(204).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
    res.write('retry: 20\n\n');
    let sent = 0;
    // replayOverlap: misbehave like a server that replays a few events the client already has.
    cursor = Math.max(0, cursor - stream.replayOverlap);
    const send = (e: DurableEvent) => {
      const frame = `id: ${e.id}\nevent: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`;
      sent++;
      if (stream.dropEvery > 0 && sent >= stream.dropEvery && !['done', 'error', 'cancelled'].includes(e.event)) {
        // A network drop right after this event reached the wire: no terminal event, connection gone.
        stream.subscribers.delete(send);
        res.write(frame, () => res.socket?.destroy());
        dropped = true;
        return;
      }
      res.write(frame);
      if (e.event === 'done' || e.event === 'error' || e.event === 'cancelled') {
        stream.subscribers.delete(send);
        res.end();
      }
    };
    let dropped = false;
    for (const e of stream.events.slice(cursor)) {
      if (res.writableEnded || dropped) return;
      send(e);
    }
    if (res.writableEnded || dropped) return;
    stream.subscribers.add(send);
    res.on('close', () => stream.subscribers.delete(send));
    res.write(': keep-alive\n\n');
  }

  private stream(req: IncomingMessage, res: ServerResponse, request: { method: string; params?: any; id: number }): void {
    const [, kind, suffix] = /^test\.([a-z]+)(?:\.([a-z]+))?$/.exec(request.method) ?? [];
    const format = suffix as Format;
    const p = request.params ?? {};
    const known = ['rows', 'fail', 'endless', 'die', 'unicode', 'chunks', 'hugeline', 'garbage', 'silent'];
    if (kind === 'html') {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>Hello from a proxy</body></html>');
      return;
    }
    if (!known.includes(kind) || !(format in CONTENT_TYPES)) {
      return json(res, 404, { jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id: request.id });
    }
    let ended = false;
    res.on('close', () => {
      if (!ended) this.observed.clientsLeft.push(request.method);
    });
    res.writeHead(200, { 'content-type': CONTENT_TYPES[format], 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
    let first = true;
    const row = (value: unknown): string => {
      const text = JSON.stringify(value);
      if (format === 'ndjson') return text + '\n';
      if (format === 'sse') return `data: ${text}\n\n`;
      const out = (first ? '[' : ',') + text;
      first = false;
      return out;
    };
    const finish = (error?: { code: number; message: string; data?: unknown }) => {
      ended = true;
      let tail = '';
      if (format === 'ndjson') tail = error ? JSON.stringify({ error }) + '\n' : '';
      if (format === 'sse') tail = (error ? `event: error\ndata: ${JSON.stringify({ error })}\n\n` : '') + 'event: end\ndata: {}\n\n';
      if (format === 'json') tail = (error ? (first ? '[' : ',') + JSON.stringify({ _error: error }) : first ? '[' : '') + ']';
      res.end(tail);
    };
    switch (kind) {
      case 'rows': {
        let i = 0;
        const next = () => {
          if (res.destroyed) return;
          if (i === p.count) return finish();
          res.write(row({ i: i++ }));
          if (p.delayMs) this.later(p.delayMs, next);
          else next();
        };
        return next();
      }
      case 'fail':
        for (let i = 0; i < p.after; i++) res.write(row({ i }));
        return finish({ code: -32002, message: 'Row gone', data: { after: p.after } });
      case 'die':
        for (let i = 0; i < p.after; i++) res.write(row({ i }));
        this.later(20, () => {
          ended = true;
          res.socket?.destroy();
        });
        return;
      case 'endless': {
        let i = 0;
        const tick = () => {
          if (res.destroyed || !res.writable) return;
          res.write(row({ i: i++ }));
          this.observed.endlessRowsWritten = i;
          this.later(5, tick);
        };
        return tick();
      }
      case 'unicode': {
        const bytes = Buffer.from(JSON.stringify({ text: 'a😀b' }) + '\n');
        const cut = bytes.indexOf(0xf0) + 2; // inside the 4-byte emoji
        res.write(bytes.subarray(0, cut));
        this.later(30, () => {
          res.write(bytes.subarray(cut));
          finish();
        });
        return;
      }
      case 'chunks': {
        const data = Buffer.from(p.text as string);
        const n = Math.max(1, Math.ceil(data.length / p.size));
        for (let seq = 0; seq < n; seq++) {
          const part = data.subarray(seq * p.size, (seq + 1) * p.size).toString('base64');
          res.write(row({ type: 'result_chunk', result_id: 'file-1', chunk_seq: seq, data: part, encoding: 'base64', more: seq < n - 1 }));
        }
        res.write(row({ done: true }));
        return finish();
      }
      case 'hugeline': {
        const block = Buffer.alloc(64 * 1024, 'x');
        res.write('{"a":"');
        const pump = () => {
          while (!res.destroyed && res.write(block));
          if (!res.destroyed) res.once('drain', pump);
        };
        return pump();
      }
      case 'garbage': {
        const junk = Buffer.alloc(4096);
        for (let i = 0; i < junk.length; i++) junk[i] = (i * 7919 + 13) & 0xff;
        res.write(junk);
        return finish();
      }
      case 'silent':
        res.flushHeaders();
        return;
    }
  }
}

function body(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

function json(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(value));
}
