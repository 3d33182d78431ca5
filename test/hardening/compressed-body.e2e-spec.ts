/**
 * Compressed request bodies (`Content-Encoding`), on every route that reads a body, over real
 * HTTP on both platforms: `gzip` (`x-gzip`), `deflate` and `br` are inflated by the module's own
 * reader (http/request-body.ts) and answered exactly as the same body sent plain; `identity` is
 * read as sent. `maxRequestSize` counts the inflated bytes — a zip bomb gets the oversize body's
 * 413 with its lingering close, and inflating stops at the limit (counted here on zlib's own
 * streams) — and the bytes on the wire too. Another coding, or stacked ones, is a 415 with
 * `Accept-Encoding`; a body that is not what its coding says is a 400 with -32700, in each route
 * family's shape. With `@fastify/compress`'s request decompression (a `preParsing` hook) nothing
 * is inflated twice; on Express the module inflates with Nest's body parser on or off.
 */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { pipeline, Readable } from 'node:stream';
import zlib from 'node:zlib';
import { Injectable, Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { JsonRpcModule, RpcMethod, RpcStream } from '@nest-jsonrpc/server';
import { CapturingLogger, startTestApp, TEST_PLATFORM, testAdapter, type TestApp } from '../support/rpc-test-app.js';

@Injectable()
class CompressedMethods {
  @RpcMethod('echo')
  echo(params: unknown) {
    return params ?? null;
  }

  @RpcMethod('rows')
  @RpcStream()
  *rows(params: { count?: number } | undefined) {
    for (let n = 1; n <= (params?.count ?? 2); n++) yield { n };
  }
}

@Module({
  imports: [JsonRpcModule.forRoot({ stream: { enabled: true }, mcp: { enabled: true, rest: true, exposeAll: true } })],
  providers: [CompressedMethods],
})
class CompressedModule {}

@Injectable()
class EchoMethods {
  @RpcMethod('echo')
  echo(params: unknown) {
    return params ?? null;
  }
}

@Module({
  imports: [JsonRpcModule.forRoot({ limits: { lingerMs: 300, bodyTimeoutMs: 1_000 } })],
  providers: [EchoMethods],
})
class BoundedModule {}

@Module({
  imports: [JsonRpcModule.forRoot({ limits: { lingerMs: 30_000 } })],
  providers: [EchoMethods],
})
class LongLingerModule {}

type Coding = 'gzip' | 'x-gzip' | 'deflate' | 'br';
const COMPRESS: Record<Coding, (input: Buffer) => Buffer> = {
  gzip: (input) => zlib.gzipSync(input),
  'x-gzip': (input) => zlib.gzipSync(input),
  deflate: (input) => zlib.deflateSync(input),
  br: (input) => zlib.brotliCompressSync(input),
};
const CODINGS = Object.keys(COMPRESS) as Coding[];

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/** One POST with node:http on its own connection (chunked when `chunked`), the whole answer read. */
function post(url: string, body: Buffer, headers: Record<string, string>, chunked = false): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', ...(chunked ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(body.length) }), ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    // A client still sending when the answer comes may see its write fail: the answer is what counts.
    req.on('error', reject);
    req.end(body);
  });
}

const MCP_HEADERS = { accept: 'application/json, text/event-stream' };
const TOO_LARGE = '{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: body exceeds 1048576 bytes"},"id":null}';
const UNSUPPORTED = '{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: Content-Encoding must be gzip, deflate or br (or none)"},"id":null}';
const UNSUPPORTED_TOOL = '{"content":[{"type":"text","text":"Error -32600: Content-Encoding must be gzip, deflate or br (or none)"}],"isError":true}';
const NOT_INFLATED = '{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error: the request body could not be inflated as its Content-Encoding says"},"id":null}';
const NOT_INFLATED_TOOL = '{"content":[{"type":"text","text":"Error -32700: Parse error: the request body could not be inflated as its Content-Encoding says"}],"isError":true}';

/** The bodies each route reads, and the headers it needs. */
const ROUTES = [
  { path: '/rpc', headers: {}, body: '{"jsonrpc":"2.0","method":"echo","params":["a"],"id":1}', unsupported: UNSUPPORTED, undecodable: NOT_INFLATED },
  { path: '/rpc/stream', headers: {}, body: '{"jsonrpc":"2.0","method":"rows","params":{"count":3},"id":1}', unsupported: UNSUPPORTED, undecodable: NOT_INFLATED },
  { path: '/mcp', headers: MCP_HEADERS, body: '{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo","arguments":{"x":1}},"id":1}', unsupported: UNSUPPORTED, undecodable: NOT_INFLATED },
  { path: '/mcp/call', headers: {}, body: '{"name":"echo","arguments":{"x":1}}', unsupported: UNSUPPORTED_TOOL, undecodable: NOT_INFLATED_TOOL },
];

/**
 * Counts the bytes zlib's inflating streams hand out, in this process (the server's): each one
 * pushes what it made through its prototype chain's `push`, so a wrapper on the three classes the
 * reader uses sees every inflated chunk, whoever created the stream.
 */
function countInflated(): { readonly bytes: number; restore(): void } {
  const classes = [zlib.Gunzip, zlib.Inflate, zlib.BrotliDecompress] as unknown as Array<{ prototype: Readable }>;
  const counter = { bytes: 0, restore: () => classes.forEach((c) => delete (c.prototype as Partial<Readable>).push) };
  for (const c of classes) {
    const inherited = Object.getPrototypeOf(c.prototype).push as Readable['push'];
    Object.defineProperty(c.prototype, 'push', {
      configurable: true,
      writable: true,
      value(this: Readable, chunk: unknown, encoding?: BufferEncoding) {
        if (Buffer.isBuffer(chunk)) counter.bytes += chunk.length;
        return inherited.call(this, chunk, encoding);
      },
    });
  }
  return counter;
}

/** 600 gzip members of 1 MiB of zeros: 600 MiB inflated, 600 kB on the wire (still arriving when the 413 is due). */
const LONG_BOMB = Buffer.concat(Array.from({ length: 600 }, () => zlib.gzipSync(Buffer.alloc(1024 * 1024))));

/** 10 MiB of a JSON string's content: valid JSON-RPC were it inflated whole, so only its size is wrong. */
const BOMB_TEXT = Buffer.concat([Buffer.from('{"jsonrpc":"2.0","method":"echo","id":1,"params":["'), Buffer.alloc(10 * 1024 * 1024, '0'), Buffer.from('"]}')]);

describe('compressed request bodies', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(CompressedModule);
  });
  afterAll(() => t.close());

  const plain = (path: string, body: string, headers: Record<string, string> = {}) => post(t.url + path, Buffer.from(body), headers);
  /** Status and body: the request id and the length are the only headers that may differ. */
  const seen = ({ status, headers, text }: Answer) => ({ status, type: headers['content-type'], text });

  describe.each(CODINGS)('Content-Encoding: %s', (coding) => {
    const compressed = (path: string, body: string, headers: Record<string, string> = {}, chunked = false) =>
      post(t.url + path, COMPRESS[coding](Buffer.from(body)), { 'content-encoding': coding, ...headers }, chunked);

    it.each([
      ['a call', '{"jsonrpc":"2.0","method":"echo","params":{"text":"héllo ✓"},"id":7}'],
      ['a batch', '[{"jsonrpc":"2.0","method":"echo","params":[1],"id":1},{"jsonrpc":"2.0","method":"nope","id":2},{"jsonrpc":"2.0","method":"echo","params":[3]}]'],
      ['a notification', '{"jsonrpc":"2.0","method":"echo","params":[1]}'],
    ])('POST /rpc, %s: answered exactly as the same body sent plain (declared length and chunked)', async (_label, body) => {
      const expected = seen(await plain('/rpc', body));
      expect(seen(await compressed('/rpc', body))).toEqual(expected);
      expect(seen(await compressed('/rpc', body, {}, true))).toEqual(expected);
    });

    it('POST /rpc/stream streams its rows', async () => {
      const answer = await compressed('/rpc/stream', '{"jsonrpc":"2.0","method":"rows","params":{"count":3},"id":1}');
      expect([answer.status, answer.text]).toEqual([200, '{"n":1}\n{"n":2}\n{"n":3}\n']);
    });

    it('POST /mcp tools/call and POST /mcp/call answer as plain', async () => {
      for (const { path, headers, body } of ROUTES.filter((r) => r.path.startsWith('/mcp'))) {
        const expected = seen(await plain(path, body, headers));
        expect(expected.status).toBe(200);
        expect(seen(await compressed(path, body, headers))).toEqual(expected);
      }
    });
  });

  it('the coding is named in any case; identity (any case) or an empty header is read as sent', async () => {
    const body = '{"jsonrpc":"2.0","method":"echo","params":[1],"id":1}';
    const expected = seen(await plain('/rpc', body));
    for (const name of ['GZIP', 'Gzip', ' x-gzip ']) expect(seen(await post(`${t.url}/rpc`, zlib.gzipSync(body), { 'content-encoding': name }))).toEqual(expected);
    for (const name of ['identity', 'IDENTITY', 'Identity', '']) expect(seen(await plain('/rpc', body, { 'content-encoding': name }))).toEqual(expected);
  });

  describe('maxRequestSize counts the inflated bytes', () => {
    let counter: ReturnType<typeof countInflated>;
    beforeEach(() => {
      counter = countInflated();
    });
    afterEach(() => counter.restore());

    it.each([
      ['gzip', zlib.gzipSync(BOMB_TEXT)],
      ['br', zlib.brotliCompressSync(BOMB_TEXT)],
      ['deflate', zlib.deflateSync(BOMB_TEXT)],
    ] as const)('a zip bomb (%s, 10 MiB in a few kB) gets the 413 of an oversize body, and is inflated no further than the limit', async (coding, bomb) => {
      expect(bomb.length).toBeLessThan(16 * 1024);
      const uncompressed = await post(`${t.url}/rpc`, BOMB_TEXT.subarray(0, 2 * 1024 * 1024), {});
      const before = counter.bytes;
      for (const chunked of [false, true]) {
        const answer = await post(`${t.url}/rpc`, bomb, { 'content-encoding': coding }, chunked);
        expect([answer.status, answer.headers.connection, answer.text]).toEqual([413, 'close', TOO_LARGE]);
        expect([answer.status, answer.headers.connection, answer.text]).toEqual([uncompressed.status, uncompressed.headers.connection, uncompressed.text]);
      }
      // Two readings, each stopped at the zlib chunk (16 KiB) that passed the limit (1 MiB), not at 10 MiB.
      expect(counter.bytes - before).toBeGreaterThan(2 * 1024 * 1024);
      expect(counter.bytes - before).toBeLessThanOrEqual(2 * (1024 * 1024 + 32 * 1024));
    });

    it('the 413 of a bomb on every route that reads a body, in its family shape', async () => {
      const bomb = zlib.gzipSync(BOMB_TEXT);
      for (const { path, headers } of ROUTES) {
        const answer = await post(t.url + path, bomb, { 'content-encoding': 'gzip', ...headers });
        const expected = path === '/mcp/call' ? '{"content":[{"type":"text","text":"Error -32600: Invalid Request: body exceeds 1048576 bytes"}],"isError":true}' : TOO_LARGE;
        expect([path, answer.status, answer.headers.connection, answer.text]).toEqual([path, 413, 'close', expected]);
      }
    });

    it('the wire is bounded too: empty deflate blocks around a call are served within the limit, refused 413 past it however little they inflate to', async () => {
      // zlib's header, empty stored blocks (5 bytes each, inflating to nothing), the call in a final block, its Adler-32.
      const call = Buffer.from('{"jsonrpc":"2.0","method":"echo","params":[1],"id":1}');
      const padded = (blocks: number) =>
        Buffer.concat([Buffer.from([0x78, 0x9c]), Buffer.alloc(blocks * 5, Buffer.from([0x00, 0x00, 0x00, 0xff, 0xff])), zlib.deflateRawSync(call), zlib.deflateSync(call).subarray(-4)]);
      expect(zlib.inflateSync(padded(10)).toString()).toBe(call.toString());
      const within = await post(`${t.url}/rpc`, padded(100_000), { 'content-encoding': 'deflate' }, true);
      expect([within.status, within.text]).toEqual([200, '{"jsonrpc":"2.0","result":[1],"id":1}']);
      const past = padded(220_000);
      expect(past.length).toBeGreaterThan(1024 * 1024);
      const answer = await post(`${t.url}/rpc`, past, { 'content-encoding': 'deflate' }, true);
      expect([answer.status, answer.headers.connection, answer.text]).toEqual([413, 'close', TOO_LARGE]);
      expect(counter.bytes).toBeLessThan(1024);
    });
  });

  describe.each(['zstd', 'compress', 'gzip, br', 'br, gzip', 'gzip, identity', 'deflate-raw'])('Content-Encoding: %s', (coding) => {
    it('415 with Accept-Encoding, in each route family shape, the connection closed', async () => {
      for (const { path, headers, body, unsupported } of ROUTES) {
        const answer = await post(t.url + path, Buffer.from(body), { 'content-encoding': coding, ...headers });
        expect([path, answer.status, answer.headers['accept-encoding'], answer.headers.connection, answer.text]).toEqual([path, 415, 'gzip, deflate, br', 'close', unsupported]);
      }
    });
  });

  const validGzip = zlib.gzipSync(Buffer.from('{"jsonrpc":"2.0","method":"echo","params":["a long enough string to cut"],"id":1}'));
  describe.each([
    ['a bad gzip header', 'gzip', Buffer.from('{"jsonrpc":"2.0","method":"echo","id":1}')],
    ['a truncated gzip stream', 'gzip', validGzip.subarray(0, validGzip.length - 12)],
    ['gzip with trailing bytes', 'gzip', Buffer.concat([validGzip, Buffer.from('junk')])],
    ['a damaged deflate stream', 'deflate', Buffer.from([0x78, 0x9c, 0xff, 0xff, 0xff, 0xff])],
    ['a truncated br stream', 'br', zlib.brotliCompressSync(Buffer.from('{"jsonrpc":"2.0","method":"echo","params":[1],"id":1}')).subarray(0, 8)],
  ])('%s', (_label, coding, body) => {
    it('400 with -32700 "could not be inflated", in each route family shape, the connection closed; the server serves on', async () => {
      for (const { path, headers, undecodable } of ROUTES) {
        for (const chunked of [false, true]) {
          const answer = await post(t.url + path, body, { 'content-encoding': coding, ...headers }, chunked);
          expect([path, answer.status, answer.headers.connection, answer.text]).toEqual([path, 400, 'close', undecodable]);
        }
      }
      expect((await t.rpc({ jsonrpc: '2.0', method: 'echo', params: [2], id: 2 })).body).toEqual({ jsonrpc: '2.0', result: [2], id: 2 });
      expect(t.logger.text('error')).toBe('');
    });
  });
});

describe('compressed uploads that do not end, or end late', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(BoundedModule);
  });
  afterAll(() => t.close());

  /** A raw chunked gzip upload of zeros that never ends, 64 KiB of zeros every 5 ms. */
  function endlessGzipUpload(port: number): Promise<{ head: string; closedAfterMs: number }> {
    const started = Date.now();
    return new Promise((resolve, reject) => {
      // The head is queued before any chunk can be (a socket sends what was written before it
      // connected in order): chunks written ahead of it were a 400 from the server's HTTP parser.
      const socket = connect(port, '127.0.0.1');
      socket.write('POST /rpc HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n');
      const gzip = zlib.createGzip();
      gzip.on('data', (c: Buffer) => socket.writable && socket.write(`${c.length.toString(16)}\r\n${c.toString('latin1')}\r\n`, 'latin1'));
      const zeros = Buffer.alloc(64 * 1024, '0');
      const timer = setInterval(() => gzip.write(zeros, () => gzip.flush()), 5);
      let head = '';
      socket.on('data', (c) => (head += c.toString()));
      socket.on('error', () => undefined);
      socket.once('close', () => {
        clearInterval(timer);
        gzip.destroy();
        resolve({ head, closedAfterMs: Date.now() - started });
      });
      setTimeout(() => reject(new Error('still open after 20 s')), 20_000).unref();
    });
  }

  it('an endless gzip upload gets its 413 once the inflated bytes pass the limit, and is cut by the lingering bounds', async () => {
    const counter = countInflated();
    try {
      const { head, closedAfterMs } = await endlessGzipUpload(Number(new URL(t.url).port));
      expect(head).toMatch(/^HTTP\/1\.1 413 /);
      expect(head).toMatch(/\r\nconnection: close\r\n/i);
      expect(head.slice(head.indexOf('\r\n\r\n') + 4)).toBe(TOO_LARGE);
      expect(closedAfterMs).toBeLessThan(10_000);
      expect(counter.bytes).toBeLessThan(1024 * 1024 + 128 * 1024);
    } finally {
      counter.restore();
    }
  });

  it('a bomb still uploading: the 413 at once, the connection closed when the upload is over, not at limits.lingerMs', async () => {
    const lingering = await startTestApp(LongLingerModule);
    try {
      const started = Date.now();
      const answer = await post(`${lingering.url}/rpc`, LONG_BOMB, { 'content-encoding': 'gzip' }, true);
      expect([answer.status, answer.headers.connection, answer.text]).toEqual([413, 'close', TOO_LARGE]);
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      await lingering.close();
    }
  });

  it('a gzip body that arrives is served; one that stalls gets its 408 after limits.bodyTimeoutMs', async () => {
    const body = zlib.gzipSync('{"jsonrpc":"2.0","method":"echo","params":[1],"id":1}');
    expect((await post(`${t.url}/rpc`, body, { 'content-encoding': 'gzip' })).text).toBe('{"jsonrpc":"2.0","result":[1],"id":1}');
    const head = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(new URL(t.url).port), '127.0.0.1', () => {
        socket.write(`POST /rpc HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: ${body.length}\r\n\r\n`);
        socket.write(body.subarray(0, 12));
      });
      let text = '';
      socket.on('data', (c) => (text += c.toString()));
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
    });
    expect(head).toMatch(/^HTTP\/1\.1 408 /);
    expect(head.slice(head.indexOf('\r\n\r\n') + 4)).toBe('{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: the body did not arrive within 1000 ms"},"id":null}');
  });
});

/**
 * What an app's own request decompression means for the module's routes. Fastify:
 * `@fastify/compress` inflates in a route `preParsing` hook it adds to every route (the module's
 * too), leaves `Content-Encoding` as it was, and marks its stream with `receivedEncodedLength`;
 * the hook below does exactly that (the plugin is not a dependency of this repository). Express:
 * the module reads its bodies before body-parser, whether Nest mounts it or not.
 */
describe(`with the app's own request decompression (${TEST_PLATFORM})`, () => {
  const call = '{"jsonrpc":"2.0","method":"echo","params":["twice?"],"id":1}';

  async function listen(configure: (app: INestApplication) => void, options: object = {}, module: object = CompressedModule): Promise<{ app: INestApplication; url: string }> {
    const app = await NestFactory.create<INestApplication>(module, testAdapter(), { logger: new CapturingLogger(), ...options });
    configure(app);
    await app.listen(0, '127.0.0.1');
    return { app, url: `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}` };
  }

  if (TEST_PLATFORM === 'fastify') {
    /** `@fastify/compress`'s request decompression, as the plugin (9.x) does it: an `onRoute` hook that adds a `preParsing` hook to every route. */
    const fastifyCompressLike = (app: INestApplication) => {
      type Hook = (request: { headers: IncomingHttpHeaders }, reply: unknown, payload: Readable, done: (error: Error | null, payload?: Readable) => void) => void;
      const fastify = app.getHttpAdapter().getInstance() as { addHook(name: 'onRoute', hook: (route: { preParsing?: Hook | Hook[] }) => void): void };
      const preParsing: Hook = (request, _reply, raw, done) => {
        const decompress = { gzip: zlib.createGunzip, deflate: zlib.createInflate, br: zlib.createBrotliDecompress }[request.headers['content-encoding'] as string];
        if (!decompress) return done(null, raw);
        const decompresser = Object.assign(decompress(), { receivedEncodedLength: 0 });
        decompresser.on('error', (error) => Object.assign(error, { statusCode: 400, code: 'FST_CP_ERR_INVALID_CONTENT' }));
        decompresser.pause();
        raw.on('data', (chunk: Buffer) => (decompresser.receivedEncodedLength += chunk.length));
        pipeline(raw, decompresser, () => undefined);
        done(null, decompresser);
      };
      fastify.addHook('onRoute', (route) => {
        route.preParsing = [preParsing, ...(route.preParsing === undefined ? [] : ([] as Hook[]).concat(route.preParsing))];
      });
    };

    it('a preParsing hook that inflates (@fastify/compress): inflated once, bounded, its corrupt bodies the module 400', async () => {
      const counter = countInflated();
      const { app, url } = await listen(fastifyCompressLike);
      try {
        const answer = await post(`${url}/rpc`, zlib.gzipSync(call), { 'content-encoding': 'gzip' });
        expect([answer.status, answer.text]).toEqual([200, '{"jsonrpc":"2.0","result":["twice?"],"id":1}']);
        const mcp = await post(`${url}/mcp/call`, zlib.gzipSync('{"name":"echo","arguments":{"x":1}}'), { 'content-encoding': 'gzip' });
        expect(mcp.status).toBe(200);
        const before = counter.bytes;
        const bomb = await post(`${url}/rpc`, zlib.gzipSync(BOMB_TEXT), { 'content-encoding': 'gzip' });
        expect([bomb.status, bomb.headers.connection, bomb.text]).toEqual([413, 'close', TOO_LARGE]);
        expect(counter.bytes - before).toBeLessThan(2 * 1024 * 1024);
        const corrupt = await post(`${url}/rpc`, validGzipCut(), { 'content-encoding': 'gzip' });
        expect([corrupt.status, corrupt.text]).toEqual([400, NOT_INFLATED]);
      } finally {
        counter.restore();
        await app.close();
      }
    });

    it('a bomb still uploading through that hook: the 413 at once, the connection closed when the upload is over, not at limits.lingerMs', async () => {
      const { app, url } = await listen(fastifyCompressLike, {}, LongLingerModule);
      try {
        const started = Date.now();
        const answer = await post(`${url}/rpc`, LONG_BOMB, { 'content-encoding': 'gzip' }, true);
        expect([answer.status, answer.headers.connection, answer.text]).toEqual([413, 'close', TOO_LARGE]);
        // lingerMs is 30 s: a lingering read held back by the hook's paused stream would wait for it.
        expect(Date.now() - started).toBeLessThan(10_000);
      } finally {
        await app.close();
      }
    });
  } else {
    it.each([
      ["Nest's body parser on (the default)", {}],
      ['bodyParser: false', { bodyParser: false }],
    ])('%s: the module inflates its own bodies', async (_label, options) => {
      const { app, url } = await listen(() => undefined, options);
      try {
        const answer = await post(`${url}/rpc`, zlib.gzipSync(call), { 'content-encoding': 'gzip' });
        expect([answer.status, answer.text]).toEqual([200, '{"jsonrpc":"2.0","result":["twice?"],"id":1}']);
        const unsupported = await post(`${url}/rpc`, Buffer.from(call), { 'content-encoding': 'zstd' });
        expect([unsupported.status, unsupported.text]).toEqual([415, UNSUPPORTED]);
        // No body to inflate: the empty body's -32700, as without a coding (body-parser would try, and answer its 400).
        const empty = await post(`${url}/rpc`, Buffer.alloc(0), { 'content-encoding': 'gzip' });
        expect([empty.status, empty.text]).toEqual([200, '{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"},"id":null}']);
      } finally {
        await app.close();
      }
    });
  }
});

function validGzipCut(): Buffer {
  const whole = zlib.gzipSync('{"jsonrpc":"2.0","method":"echo","params":["a long enough string to cut"],"id":1}');
  return whole.subarray(0, whole.length - 12);
}
