/**
 * Slow and hostile clients are bounded, and other clients are served meanwhile.
 * - a body trickling one byte at a time: 408 after `limits.bodyTimeoutMs` (the module's own
 *   bound: Fastify's `requestTimeout` did not cut such a body in our trials, see docs/limits.md);
 * - headers trickling: Node's `headersTimeout` (set through `FastifyAdapter({ http })`; on Express
 *   the app sets it on `app.getHttpServer()`, where Node checks it every 30 s — an interval only a
 *   server's constructor takes — so there the test checks that the module leaves it alone;
 *   docs/limits.md);
 * - a thousand idle connections: closed by the socket timeout (Fastify's `connectionTimeout`,
 *   `app.getHttpServer().setTimeout()` on Express: the same Node setting);
 * - a reader that stops reading a durable attach, or a live stream: dropped after
 *   `limits.stalledWriteMs` (the live stream's producer is stopped; the durable stream runs on
 *   and another client reads all of it).
 * Timeouts are configured short here; docs/limits.md lists the defaults.
 */
import { connect, type Socket } from 'node:net';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Injectable, Module, type Type } from '@nestjs/common';
import type { Server } from 'node:http';
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { JsonRpcModule, MemoryStreamStore, RpcMethod, RpcStream, type JsonRpcModuleOptions, type RpcContext } from '@nest-jsonrpc/server';
import { eventually } from '../support/async.js';
import { TEST_PLATFORM, testAdapter } from '../support/rpc-test-app.js';

const PAD = 'x'.repeat(32 * 1024);
const STREAMS: JsonRpcModuleOptions = { stream: { enabled: true }, durable: { enabled: true, store: new MemoryStreamStore() } };

@Injectable()
class SlowClientMethods {
  static liveAborted = false;

  @RpcMethod('echo')
  echo(params: unknown) {
    return params ?? null;
  }

  /** 1000 rows of 32 KiB (32 MiB): far more than socket buffers hold. */
  @RpcMethod('big')
  @RpcStream({ durable: true })
  async *big() {
    for (let i = 1; i <= 1000; i++) {
      yield { i, pad: PAD };
      await nextTurn();
    }
  }

  /** Rows of 32 KiB for ever, until the client goes (or is dropped). */
  @RpcMethod('endless')
  @RpcStream()
  async *endless(_params: unknown, ctx: RpcContext) {
    try {
      while (!ctx.signal.aborted) {
        yield { pad: PAD };
        await nextTurn();
      }
    } finally {
      SlowClientMethods.liveAborted = ctx.signal.aborted;
    }
  }
}

interface App {
  app: INestApplication;
  url: string;
  port: number;
  close(): Promise<void>;
}

/** The HTTP server's own settings, as each platform takes them. */
interface ServerSettings {
  /** Socket inactivity (Fastify's `connectionTimeout`; Node's `server.setTimeout()`). */
  connectionTimeout?: number;
  /** Fastify only: given to Node's server when Fastify creates it. */
  http?: { headersTimeout: number; connectionsCheckingInterval: number };
}

async function start(options: JsonRpcModuleOptions, settings: ServerSettings = {}): Promise<App> {
  @Module({ imports: [JsonRpcModule.forRoot({ ...STREAMS, ...options })], providers: [SlowClientMethods] })
  class SlowClientModule {}
  const adapter = TEST_PLATFORM === 'fastify' ? new FastifyAdapter(settings as ConstructorParameters<typeof FastifyAdapter>[0]) : testAdapter();
  const app = await NestFactory.create<INestApplication>(SlowClientModule as Type<unknown>, adapter, { logger: false });
  if (TEST_PLATFORM === 'express' && settings.connectionTimeout !== undefined) (app.getHttpServer() as Server).setTimeout(settings.connectionTimeout);
  await app.listen(0, '127.0.0.1');
  const port = (app.getHttpServer().address() as { port: number }).port;
  return { app, port, url: `http://127.0.0.1:${port}`, close: () => app.close() };
}


/** A raw connection: what it received, and when the server closed it. */
function rawConnection(port: number) {
  const socket: Socket = connect(port, '127.0.0.1');
  const started = Date.now();
  const state = { text: '', closedAfterMs: -1 };
  socket.on('data', (chunk) => (state.text += chunk.toString('latin1')));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) =>
    socket.once('close', () => {
      state.closedAfterMs = Date.now() - started;
      resolve();
    }),
  );
  return { socket, state, closed };
}

/**
 * Stops reading in the same 'data' event that brings the response headers: paused any later
 * (after a poll), a reader takes megabytes at loopback speed and grows its receive window.
 */
function pauseAtHeaders({ socket, state }: ReturnType<typeof rawConnection>): Promise<void> {
  return new Promise<void>((resolve) => {
    const onData = () => {
      if (!state.text.includes('\r\n\r\n')) return;
      socket.pause();
      socket.off('data', onData);
      resolve();
    };
    socket.on('data', onData);
  });
}

/** Writes `text` one byte every `everyMs` while the socket is open. */
function trickle(socket: Socket, text: string, everyMs: number): void {
  let i = 0;
  const timer = setInterval(() => {
    if (!socket.writable || i >= text.length) return clearInterval(timer);
    socket.write(text[i++]);
  }, everyMs);
  socket.once('close', () => clearInterval(timer));
}

async function echo(url: string): Promise<unknown> {
  const res = await fetch(`${url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","method":"echo","params":[1],"id":1}' });
  return res.json();
}

describe('slow and hostile clients are bounded', () => {
  it('a body trickling one byte at a time: 408 after limits.bodyTimeoutMs, connection closed, others served meanwhile', async () => {
    const t = await start({ limits: { bodyTimeoutMs: 500 } });
    try {
      const { socket, state, closed } = rawConnection(t.port);
      socket.write('POST /rpc HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n');
      trickle(socket, '{"jsonrpc":"2.0","method":"echo","params":["' + 'a'.repeat(900), 50);
      expect(await echo(t.url)).toEqual({ jsonrpc: '2.0', result: [1], id: 1 });
      await closed;
      expect(state.text).toMatch(/^HTTP\/1\.1 408 /);
      expect(state.text).toMatch(/\r\nconnection: close\r\n/i);
      expect(state.text.slice(state.text.indexOf('\r\n\r\n') + 4)).toBe(
        '{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: the body did not arrive within 500 ms"},"id":null}',
      );
      // Answered at 500 ms and closed at once (no lingering for a client this slow); generous bounds.
      expect(state.closedAfterMs).toBeGreaterThanOrEqual(500);
      expect(state.closedAfterMs).toBeLessThan(4_000);
    } finally {
      await t.close();
    }
  });

  // The durable routes read no body; `/rpc` reads bodies, but not a GET's (on Fastify its parser
  // never sees one, so the route bounds it). Fastify answers the GET at once (404, 405) and closes at the deadline; Express drains a durable
  // route's body first (408) and refuses a body that is not JSON on `/rpc` at once (415), whose
  // lingering close is bounded by limits.lingerMs (3 s here); on Fastify the deadline closes it first.
  it.each([
    ['/rpc/streams/00000000-0000-4000-8000-000000000000', { fastify: 404, express: 408 }],
    ['/rpc', { fastify: 405, express: 415 }],
  ])('a body trickling to a route that reads none (GET %s): its connection closed after limits.bodyTimeoutMs all the same', async (path, statuses) => {
    const t = await start({ limits: { bodyTimeoutMs: 500, lingerMs: 3_000 } });
    try {
      const { socket, state, closed } = rawConnection(t.port);
      socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n`);
      trickle(socket, 'a'.repeat(900), 50);
      await closed;
      expect(state.text).toMatch(new RegExp(`^HTTP/1\\.1 ${statuses[TEST_PLATFORM]} `));
      expect(state.closedAfterMs).toBeGreaterThanOrEqual(500);
      expect(state.closedAfterMs).toBeLessThan(TEST_PLATFORM === 'fastify' ? 2_500 : 4_000);
    } finally {
      await t.close();
    }
  });

  // On Express the same Node setting is the app's to set on `app.getHttpServer()`: the module
  // leaves the server Nest made as it is (its check interval is fixed when it is created).
  if (TEST_PLATFORM === 'express') {
    it("headers trickling: the server's headersTimeout is Node's, left as Nest's Express server has it", async () => {
      const t = await start({});
      try {
        const server = t.app.getHttpServer() as Server;
        expect([server.headersTimeout, server.requestTimeout]).toEqual([60_000, 300_000]);
      } finally {
        await t.close();
      }
    });
  }

  if (TEST_PLATFORM === 'fastify') it("headers trickling one byte at a time: Node's headersTimeout answers 408 and closes", async () => {
    const t = await start({}, { http: { headersTimeout: 500, connectionsCheckingInterval: 100 } });
    try {
      const { socket, state, closed } = rawConnection(t.port);
      socket.write('POST /rpc HTTP/1.1\r\n');
      trickle(socket, `X-Slow: ${'a'.repeat(1000)}`, 50);
      expect(await echo(t.url)).toEqual({ jsonrpc: '2.0', result: [1], id: 1 });
      await closed;
      expect(state.text).toMatch(/^HTTP\/1\.1 408 /);
      expect(state.closedAfterMs).toBeLessThan(15_000);
    } finally {
      await t.close();
    }
  });

  it('a thousand idle connections: closed by the socket timeout (connectionTimeout); a call is served among them', async () => {
    const t = await start({}, { connectionTimeout: 1000 });
    try {
      const idle = Array.from({ length: 1000 }, () => rawConnection(t.port));
      await Promise.all(idle.map(({ socket }) => new Promise<void>((resolve) => (socket.connecting ? socket.once('connect', () => resolve()) : resolve()))));
      expect(await echo(t.url)).toEqual({ jsonrpc: '2.0', result: [1], id: 1 });
      await Promise.all(idle.map(({ closed }) => closed));
      expect(Math.max(...idle.map(({ state }) => state.closedAfterMs))).toBeLessThan(20_000);
      expect(t.app.getHttpServer().connections ?? 0).toBeLessThanOrEqual(1);
    } finally {
      await t.close();
    }
  });

  it('a stalled reader on a durable attach is dropped after limits.stalledWriteMs; another client reads the whole stream', async () => {
    const t = await start({ limits: { stalledWriteMs: 500 } });
    try {
      const started = await (await fetch(`${t.url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","method":"big","id":1}' })).json();
      const id = started.result.stream_id as string;
      // The stalled reader: attaches, then never reads. Its server-side socket is the signal that
      // it was dropped (a paused client sees nothing until it reads).
      const server = t.app.getHttpServer() as import('node:http').Server;
      const serverSockets: Socket[] = [];
      const onConnection = (socket: Socket) => serverSockets.push(socket);
      server.on('connection', onConnection);
      const stalled = rawConnection(t.port);
      const headersRead = pauseAtHeaders(stalled);
      stalled.socket.write(`GET /rpc/streams/${id} HTTP/1.1\r\nHost: x\r\n\r\n`);
      await headersRead;
      server.off('connection', onConnection);
      const stalledOnServer = serverSockets.find((socket) => socket.remotePort === stalled.socket.localPort);
      expect(stalledOnServer).toBeDefined();
      // A healthy reader gets every event, through to the terminal one.
      const healthy = await (await fetch(`${t.url}/rpc/streams/${id}`)).text();
      expect(healthy).toContain('id: 1000\n');
      expect(healthy).toMatch(/event: done\n/);
      // The stalled one is dropped once it has held a blocked write for stalledWriteMs (on a fast
      // machine the healthy read can end before that).
      await eventually(() => stalledOnServer!.destroyed, 10_000, 'the server to drop the stalled reader');
      // Read what the stalled reader was sent before it was dropped: the server closed it long before the end.
      stalled.socket.resume();
      await stalled.closed;
      expect(stalled.state.text).not.toMatch(/event: done\n/);
      expect(stalled.state.text.length).toBeLessThan(healthy.length / 2);
    } finally {
      await t.close();
    }
  });

  it("a stalled reader of a live stream is dropped after limits.stalledWriteMs and its producer stopped", async () => {
    const t = await start({ limits: { stalledWriteMs: 500 } });
    SlowClientMethods.liveAborted = false;
    try {
      const body = '{"jsonrpc":"2.0","method":"endless","id":1}';
      const stalled = rawConnection(t.port);
      const headersRead = pauseAtHeaders(stalled);
      stalled.socket.write(`POST /rpc/stream HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
      await headersRead;
      await eventually(() => SlowClientMethods.liveAborted, 15_000, 'the producer to be stopped');
      expect(await echo(t.url)).toEqual({ jsonrpc: '2.0', result: [1], id: 1 });
      stalled.socket.destroy();
    } finally {
      await t.close();
    }
  });
});
