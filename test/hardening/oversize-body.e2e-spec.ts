/**
 * Every client gets its 413. A 5 MB body (the limit is the default 1 MiB) posted
 * by Node's `fetch` and by `node:http` — declared `Content-Length` and chunked — 50 times each on
 * every route of the module: each one reads the 413 with its exact envelope and `Connection:
 * close`, never EPIPE/ECONNRESET, because the server keeps reading (and discarding) the upload
 * for a bounded time before closing (http/early-answer.ts). `Expect: 100-continue` with an
 * oversize length gets the 413 and no `100 Continue`, so the body is never sent.
 * The MCP endpoint (`POST /mcp`) answers the same envelope; the MCP REST surface's
 * `POST /mcp/call` answers its own body shape (docs/mcp.md, "The REST surface"), delivered the same way.
 */
import { execFile } from 'node:child_process';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Injectable, Module } from '@nestjs/common';
import { JsonRpcModule, MemoryStreamStore, RpcMethod, RpcStream } from '@nest-jsonrpc/server';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';

@Injectable()
class OversizeMethods {
  @RpcMethod('echo')
  echo(params: unknown) {
    return params ?? null;
  }

  @RpcMethod('rows')
  @RpcStream()
  *rows() {
    yield { n: 1 };
  }
}

@Module({
  imports: [
    JsonRpcModule.forRoot({ stream: { enabled: true }, durable: { enabled: true, store: new MemoryStreamStore() }, mcp: { enabled: true, rest: true, exposeAll: true } }),
  ],
  providers: [OversizeMethods],
})
class OversizeModule {}

@Module({
  imports: [JsonRpcModule.forRoot({ maxRequestSize: 1024, limits: { lingerMs: 300 } })],
})
class BoundedLingerModule {}

@Module({
  imports: [JsonRpcModule.forRoot({ maxRequestSize: 1024, limits: { lingerMs: 60_000, lingerBytes: 256 * 1024 } })],
})
class ByteBoundedLingerModule {}

/** A raw chunked upload that never stops (an HTTP client would stop once it read the 413). */
function endlessUpload(port: number, started: number): Promise<{ head: string; closedAfterMs: number }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write('POST /rpc HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n');
    });
    let head = '';
    const chunk = `4000\r\n${'a'.repeat(0x4000)}\r\n`;
    const timer = setInterval(() => socket.writable && socket.write(chunk), 20);
    socket.on('data', (c) => (head += c.toString()));
    socket.on('error', () => undefined);
    socket.once('close', () => {
      clearInterval(timer);
      resolve({ head, closedAfterMs: Date.now() - started });
    });
    setTimeout(() => reject(new Error('still open after 20 s')), 20_000).unref();
  });
}

/**
 * A `text/plain` upload of `length` declared bytes over a raw socket, sent only when the test
 * says (`send`): what the server answers, and when the answer's first bytes and the close came.
 */
function wrongTypeUpload(port: number, length: number) {
  const started = Date.now();
  const socket = connect(port, '127.0.0.1');
  socket.write(`POST /rpc HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: ${length}\r\n\r\n`);
  let text = '';
  socket.on('error', () => undefined);
  const answered = new Promise<number>((resolve) => socket.once('data', () => resolve(Date.now() - started)));
  socket.on('data', (chunk) => (text += chunk.toString()));
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now() - started)));
  return { answered, closed, text: () => text, send: (bytes: number) => socket.writable && socket.write('a'.repeat(bytes)), destroy: () => socket.destroy() };
}

const TOO_LARGE = { jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request: body exceeds 1048576 bytes' }, id: null };
const STREAM_ID = '4b7a3c1e-9d2f-4e8a-b5c6-0123456789ab';
const MCP_CALL_TOO_LARGE = { content: [{ type: 'text', text: `Error ${TOO_LARGE.error.code}: ${TOO_LARGE.error.message}` }], isError: true };
const ROUTES: ReadonlyArray<{ method: string; path: string; answer: unknown }> = [
  { method: 'POST', path: '/rpc', answer: TOO_LARGE },
  { method: 'POST', path: '/rpc/stream', answer: TOO_LARGE },
  { method: 'DELETE', path: `/rpc/streams/${STREAM_ID}`, answer: TOO_LARGE },
  { method: 'POST', path: `/rpc/streams/${STREAM_ID}`, answer: TOO_LARGE },
  { method: 'POST', path: '/mcp', answer: TOO_LARGE },
  { method: 'POST', path: '/mcp/call', answer: MCP_CALL_TOO_LARGE },
];
const ATTEMPTS = 50;
const CLIENT = fileURLToPath(new URL('./support/post-oversize.mjs', import.meta.url));
const execFileAsync = promisify(execFile);
const FIVE_MB = Buffer.alloc(5 * 1024 * 1024, 'a');
// Valid JSON-RPC up to the limit, so only its size is wrong.
FIVE_MB.write('{"jsonrpc":"2.0","method":"echo","id":1,"params":["');

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

type Outcome = { status: number; connection: string | null; text: string } | { error: string; status?: undefined; connection?: undefined; text?: undefined };

/**
 * The clients run in a child process, as they do for users: with client and server on one event
 * loop the server reads each write as it happens and the race that loses the 413 never shows.
 */
async function postFromAnotherProcess(url: string, method: string, mode: string, bytes = FIVE_MB.length, contentType = 'application/json'): Promise<Outcome[]> {
  const args = [CLIENT, url, method, mode, String(ATTEMPTS), String(bytes), contentType];
  const { stdout } = await execFileAsync(process.execPath, args, { maxBuffer: 16 * 1024 * 1024 });
  return JSON.parse(stdout) as Outcome[];
}

describe('an oversize body always gets its 413 (lingering close)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(OversizeModule);
  });
  afterAll(() => t.close());

  describe.each(ROUTES)('$method $path', ({ method, path, answer }) => {
    it.each(['fetch', 'http', 'http-chunked'])(`%s, 5 MB, ${ATTEMPTS} times: every attempt reads the 413 envelope`, async (mode) => {
      const outcomes = await postFromAnotherProcess(t.url + path, method, mode);
      expect(outcomes).toHaveLength(ATTEMPTS);
      const wrong = outcomes.filter((o) => o.status !== 413 || o.connection !== 'close' || o.text !== JSON.stringify(answer));
      expect(wrong).toEqual([]);
    });
  });

  it(`the same for a 415 (900 KB of text/plain, within the limit, refused before it is read): ${ATTEMPTS} of ${ATTEMPTS} fetch posts read it`, async () => {
    const outcomes = await postFromAnotherProcess(`${t.url}/rpc`, 'POST', 'fetch', 900 * 1024, 'text/plain');
    const unsupported = '{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: Content-Type must be application/json"},"id":null}';
    expect(outcomes.filter((o) => o.status !== 415 || o.text !== unsupported)).toEqual([]);
  });

  it('Expect: 100-continue with an oversize length: 413 at once, no 100 Continue, no body sent', async () => {
    const port = Number(new URL(t.url).port);
    const head = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.write(`POST /rpc HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${FIVE_MB.length}\r\nExpect: 100-continue\r\n\r\n`);
      });
      let text = '';
      socket.on('data', (chunk) => (text += chunk.toString()));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(head).toMatch(/^HTTP\/1\.1 413 /);
    expect(head).not.toMatch(/100 Continue/i);
    expect(head).toMatch(/\r\nconnection: close\r\n/i);
    expect(head.slice(head.indexOf('\r\n\r\n') + 4)).toBe(JSON.stringify(TOO_LARGE));
  });

  // The size refusal comes before every other: before the media type (415), before the verb
  // (405), whether or not the platform reads a body for that verb. `Expect: 100-continue` keeps
  // the body unsent, so the 413 ends the exchange at once.
  it.each([
    ['POST', '/rpc', 'text/plain'],
    ['POST', '/rpc/stream', 'text/plain'],
    ['PUT', '/rpc', 'application/json'],
    ['GET', '/rpc', undefined],
    ['DELETE', '/rpc', undefined],
    ['GET', '/rpc/stream', undefined],
  ])('%s %s with an oversize declared length (%s): 413 before anything else', async (method, path, contentType) => {
    const port = Number(new URL(t.url).port);
    const head = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => {
        const type = contentType ? `Content-Type: ${contentType}\r\n` : '';
        socket.write(`${method} ${path} HTTP/1.1\r\nHost: x\r\n${type}Content-Length: ${FIVE_MB.length}\r\nExpect: 100-continue\r\n\r\n`);
      });
      let text = '';
      socket.on('data', (chunk) => (text += chunk.toString()));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(head).toMatch(/^HTTP\/1\.1 413 /);
    expect(head).toMatch(/\r\nconnection: close\r\n/i);
    expect(head.slice(head.indexOf('\r\n\r\n') + 4)).toBe(JSON.stringify(TOO_LARGE));
  });

  it('Expect: 100-continue within the limit: 100 Continue, then the answer (node:http)', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', method: 'echo', params: [1], id: 1 });
    const answer = await new Promise<{ continued: boolean; status: number; text: string }>((resolve, reject) => {
      let continued = false;
      const req = httpRequest(`${t.url}/rpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), expect: '100-continue' },
      }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ continued, status: res.statusCode!, text: Buffer.concat(chunks).toString() }));
      });
      req.on('continue', () => {
        continued = true;
        req.end(body);
      });
      req.on('error', reject);
      req.flushHeaders();
    });
    expect(answer).toEqual({ continued: true, status: 200, text: '{"jsonrpc":"2.0","result":[1],"id":1}' });
  });

  it('Expect: 100-continue with an oversize length, node:http waiting for continue: reads the 413', async () => {
    const res = await new Promise<Answer>((resolve, reject) => {
      const req = httpRequest(`${t.url}/rpc/stream`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': FIVE_MB.length, expect: '100-continue' },
      }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (c: Buffer) => chunks.push(c));
        response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, text: Buffer.concat(chunks).toString() }));
      });
      req.on('continue', () => reject(new Error('told to continue')));
      req.on('error', reject);
      req.flushHeaders();
    });
    expect(res.status).toBe(413);
    expect(res.text).toBe(JSON.stringify(TOO_LARGE));
  });

  it('the lingering is bounded: a client that never stops sending is cut after limits.lingerMs', async () => {
    const bounded = await startTestApp(BoundedLingerModule);
    try {
      const started = Date.now();
      const { head, closedAfterMs } = await endlessUpload(Number(new URL(bounded.url).port), started);
      expect(head).toMatch(/^HTTP\/1\.1 413 /);
      // It lingered (read on after answering), then closed: 300 ms, generously bounded on a loaded machine.
      expect(closedAfterMs).toBeGreaterThanOrEqual(300);
      expect(closedAfterMs).toBeLessThan(10_000);
    } finally {
      await bounded.close();
    }
  });

  it('the lingering is bounded in bytes too: past limits.lingerBytes the connection closes', async () => {
    const bounded = await startTestApp(ByteBoundedLingerModule);
    try {
      const { head, closedAfterMs } = await endlessUpload(Number(new URL(bounded.url).port), Date.now());
      expect(head).toMatch(/^HTTP\/1\.1 413 /);
      // 256 KiB at 16 KiB per 20 ms is about 0.3 s; lingerMs (60 s) never comes into it.
      expect(closedAfterMs).toBeLessThan(15_000);
    } finally {
      await bounded.close();
    }
  });

  // The 415 is an early answer too, and lingers as the 413 does (RFC 9112, 9.6): readable at once,
  // the connection closed when the upload is over — or at limits.lingerMs, while it trickles on.
  it('a 415 to a body still trickling in is readable at once; the connection closes when the body is complete, long before limits.lingerMs', async () => {
    const lingering = await startTestApp(ByteBoundedLingerModule); // lingerMs: 60 s
    const upload = wrongTypeUpload(Number(new URL(lingering.url).port), 1000);
    try {
      upload.send(10);
      await upload.answered;
      expect(upload.text()).toMatch(/^HTTP\/1\.1 415 /);
      // The 415 came while the body was still arriving, and the connection stays open for the rest.
      const early = await Promise.race([upload.closed.then(() => 'closed'), new Promise((resolve) => setImmediate(resolve, 'open'))]);
      expect(early).toBe('open');
      upload.send(990);
      // Bounded well below the linger, so a server that waited for it fails here, not at the test's timeout.
      const bound = new Promise<string>((resolve) => setTimeout(resolve, 10_000, 'still open 10 s after the body was complete').unref());
      expect(await Promise.race([upload.closed.then(() => 'closed'), bound])).toBe('closed');
      expect(upload.text()).toMatch(/\r\nconnection: close\r\n/i);
    } finally {
      upload.destroy();
      await lingering.close();
    }
  });

  it('a 415 to a body that trickles on is cut after limits.lingerMs', async () => {
    const bounded = await startTestApp(BoundedLingerModule); // lingerMs: 300
    const upload = wrongTypeUpload(Number(new URL(bounded.url).port), 1000);
    try {
      const trickle = setInterval(() => upload.send(1), 20);
      try {
        const answeredAfterMs = await upload.answered;
        const closedAfterMs = await upload.closed;
        expect(upload.text()).toMatch(/^HTTP\/1\.1 415 /);
        expect(answeredAfterMs).toBeLessThan(closedAfterMs);
        // It lingered (read on after answering) until the bound, not until the body's end (1000 bytes at 50 a second: 20 s).
        expect(closedAfterMs - answeredAfterMs).toBeGreaterThanOrEqual(250);
        expect(closedAfterMs).toBeLessThan(10_000);
      } finally {
        clearInterval(trickle);
      }
    } finally {
      upload.destroy();
      await bounded.close();
    }
  });

  it('answers to requests without a body keep the connection (405 is not an early answer)', async () => {
    const res = await fetch(`${t.url}/rpc`, { method: 'GET' });
    expect(res.status).toBe(405);
    expect(res.headers.get('connection')).not.toBe('close');
    await res.text();
  });

  it('the server still serves every route after all that', async () => {
    expect((await t.rpc({ jsonrpc: '2.0', method: 'echo', params: [2], id: 2 })).body).toEqual({ jsonrpc: '2.0', result: [2], id: 2 });
    const stream = await t.post({ jsonrpc: '2.0', method: 'rows', id: 3 }, { path: '/rpc/stream' });
    expect(await stream.text()).toBe('{"n":1}\n');
  });
});
