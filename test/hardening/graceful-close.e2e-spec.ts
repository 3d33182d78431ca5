/**
 * `app.close()` does not wait for connections that never sent a request (a browser's preconnect,
 * a client pool's spare socket): Node counts those as busy until `headersTimeout` (60 s), so
 * without the module's preClose step a SIGTERM'd app took up to a minute to stop. A call in
 * progress still gets its whole answer.
 */
import { connect, type Socket } from 'node:net';
import http from 'node:http';
import { Injectable, Module } from '@nestjs/common';
import { JsonRpcModule, RpcMethod } from '@nest-jsonrpc/server';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';
import { eventually } from '../support/async.js';

/** A call that answers only when the test says so. */
const gate = { entered: false, release: () => undefined as void };

@Injectable()
class CloseMethods {
  @RpcMethod('held')
  async held(): Promise<string> {
    gate.entered = true;
    await new Promise<void>((resolve) => (gate.release = resolve));
    return 'answered after close began';
  }
}

@Module({ imports: [JsonRpcModule.forRoot()], providers: [CloseMethods] })
class CloseModule {}

interface RawSocket {
  socket: Socket;
  received: string;
  closed: boolean;
}

async function rawSocket(port: number, send = ''): Promise<RawSocket> {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const raw: RawSocket = { socket, received: '', closed: false };
  socket.setEncoding('utf8');
  socket.on('data', (text: string) => (raw.received += text));
  socket.on('error', () => undefined);
  socket.on('close', () => (raw.closed = true));
  if (send) socket.write(send);
  return raw;
}

/** One POST over node:http so the body can be read after the server starts closing. */
function postHeld(port: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port, path: '/rpc', method: 'POST', agent: false, headers: { 'content-type': 'application/json' } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (text: string) => (body += text));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    request.on('error', reject);
    request.end(JSON.stringify({ jsonrpc: '2.0', method: 'held', id: 7 }));
  });
}

describe('closing the app with connections open', () => {
  let t: TestApp;
  afterEach(async () => {
    gate.release();
    gate.entered = false;
  });

  it('drops connections that never sent a request (or only part of one), and finishes the call in progress', async () => {
    t = await startTestApp(CloseModule);
    const port = Number(new URL(t.url).port);
    const silent = await Promise.all([rawSocket(port), rawSocket(port), rawSocket(port)]);
    const halfHeaders = await rawSocket(port, 'POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    // A keep-alive connection between two requests (Fastify's own 'idle' close covers it).
    const used = await rawSocket(port, 'POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n{"jsonrpc":"2.0","method":"held","id":1}');
    await eventually(() => gate.entered, 5000, 'the first call to reach its handler');
    gate.release();
    await eventually(() => used.received.includes('"result":"answered after close began","id":1}'), 5000, 'the keep-alive answer');
    gate.entered = false;

    const inFlight = postHeld(port);
    await eventually(() => gate.entered, 5000, 'the held call to reach its handler');

    let closed = false;
    const closing = t.close().then(() => (closed = true));
    // Every requestless socket goes now — not after Node's 60 s headersTimeout.
    const all = [...silent, halfHeaders, used];
    await eventually(() => all.every((s) => s.closed), 5000, 'the requestless connections to be closed', () =>
      JSON.stringify(all.map((s) => s.closed)),
    );
    expect(silent.map((s) => s.received)).toEqual(['', '', '']);
    expect(halfHeaders.received).toBe('');
    // The call in progress holds the close open until it has answered, in full.
    expect(closed).toBe(false);
    gate.release();
    const answer = await inFlight;
    expect(answer).toEqual({ status: 200, body: '{"jsonrpc":"2.0","result":"answered after close began","id":7}' });
    await closing;
  });
});
