/**
 * A fake LLM provider over real HTTP (node:http on 127.0.0.1, port 0). Each incoming request takes
 * the next queued answer and gets it written piece by piece, each piece its own `write()` with an
 * event-loop turn between them, so the client's network reads see the chunking. It records every
 * request (method, path, headers, body), when each connection closed, and whether a write had to
 * wait for `drain` (the client stopped reading: backpressure reached the provider).
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Chunking } from './fixtures.js';

export interface FakeAnswer {
  status?: number;
  headers?: Record<string, string>;
  /** The body: the pieces of a transcript (one Buffer, or a Bedrock transcript's frames). */
  body?: Buffer[];
  chunking?: Chunking;
  /** Milliseconds between pieces (0: one event-loop turn). */
  delayMs?: number;
  /** An endless or generated body, written with drain handling instead of `body`. */
  stream?: (write: (chunk: Buffer | string) => Promise<void>, signal: AbortSignal) => Promise<void>;
  /** Leave the response open after the body (a provider that stalls). */
  hang?: boolean;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  json: any;
  /** Resolves with the time (performance.now()) the connection closed. */
  closed: Promise<number>;
}

export interface FakeProvider {
  url: string;
  port: number;
  requests: RecordedRequest[];
  /** Queue answers, one per incoming request, in order. */
  enqueue(...answers: FakeAnswer[]): void;
  /** Resolves the first time a write had to wait for `drain`, with how many bytes had been written. */
  blocked(): Promise<number>;
  /** Bytes written to the current streamed answer so far. */
  bytesWritten(): number;
  close(): Promise<void>;
}

export async function startFakeProvider(): Promise<FakeProvider> {
  const queue: FakeAnswer[] = [];
  const requests: RecordedRequest[] = [];
  const sockets = new Set<import('node:net').Socket>();
  // One close listener per connection (keep-alive connections serve many requests).
  const socketClosed = new WeakMap<import('node:net').Socket, Promise<number>>();
  let written = 0;
  let onBlocked: ((bytes: number) => void) | undefined;
  let blockedAt: number | undefined;

  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      json = undefined;
    }
    const closed = socketClosed.get(req.socket)!;
    requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, json, closed });

    const answer = queue.shift();
    if (!answer) {
      res.writeHead(500, { 'content-type': 'text/plain' }).end('fake provider: no answer queued');
      return;
    }
    const gone = new AbortController();
    res.once('close', () => gone.abort());
    res.writeHead(answer.status ?? 200, answer.headers ?? { 'content-type': 'text/event-stream' });
    res.flushHeaders();
    written = 0;
    const write = async (chunk: Buffer | string) => {
      if (gone.signal.aborted) throw new Error('client gone');
      written += Buffer.byteLength(chunk);
      if (!res.write(chunk)) {
        if (blockedAt === undefined) {
          blockedAt = written;
          onBlocked?.(written);
        }
        await new Promise<void>((resolve) => {
          const done = () => {
            res.off('drain', done);
            res.off('close', done);
            resolve();
          };
          res.on('drain', done);
          res.on('close', done);
        });
      }
    };
    try {
      if (answer.stream) await answer.stream(write, gone.signal);
      else {
        const pieces = answer.chunking ? answer.chunking.split(answer.body ?? []) : (answer.body ?? []);
        for (const piece of pieces) {
          await write(piece);
          if (answer.delayMs) await sleep(answer.delayMs);
          else await new Promise((resolve) => setImmediate(resolve));
        }
      }
      if (!answer.hang) res.end();
    } catch {
      // The client left mid-answer: that is what several tests provoke.
      res.destroy();
    }
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socketClosed.set(socket, new Promise<number>((resolve) => socket.once('close', () => resolve(performance.now()))));
    socket.once('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    enqueue: (...answers) => queue.push(...answers),
    blocked: () =>
      blockedAt !== undefined
        ? Promise.resolve(blockedAt)
        : new Promise<number>((resolve) => {
            onBlocked = resolve;
          }),
    bytesWritten: () => written,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}
