/**
 * Fastify over HTTP/2 (`new FastifyAdapter({ http2: true })`, cleartext here; TLS changes nothing
 * the module sees): calls, a live SSE stream, and the answers sent before a body is read (413,
 * 415) on one session — an early answer ends its own stream only (HTTP/2 has no `Connection:
 * close`, and Node warns when given one), so a stream open beside it runs to its end. Express has
 * no HTTP/2 server under Nest: Fastify's project only (jest.config.mjs).
 */
import http2 from 'node:http2';
import { Injectable, Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { JsonRpcModule, RpcMethod, RpcParam, RpcStream, StreamFormat } from '@nest-jsonrpc/server';

let openGate: () => void;
const gate = new Promise<void>((resolve) => (openGate = resolve));

@Injectable()
class Http2Methods {
  @RpcMethod('add')
  add(@RpcParam('a') a: number, @RpcParam('b') b: number) {
    return a + b;
  }

  @RpcMethod('gated')
  @RpcStream({ format: StreamFormat.Sse })
  async *gated() {
    yield { row: 1 };
    await gate;
    yield { row: 2 };
  }
}

@Module({ imports: [JsonRpcModule.forRoot({ stream: { enabled: true }, maxRequestSize: 1024 })], providers: [Http2Methods] })
class Http2Module {}

interface Answer {
  /** The client's side of the request's stream. */
  stream: http2.ClientHttp2Stream;
  status: number;
  headers: http2.IncomingHttpHeaders;
  /** Resolves with the whole body once the stream ends. */
  body: Promise<string>;
  /** Resolves once the received text satisfies `predicate`. */
  until(predicate: (text: string) => boolean): Promise<string>;
}

/** One request on `session`; resolves at its response headers. `body` may be sent only in part (`end: false`). */
function request(session: http2.ClientHttp2Session, headers: http2.OutgoingHttpHeaders, body?: string, end = true): Promise<Answer> {
  const stream = session.request({ ':method': 'POST', ...headers });
  if (body !== undefined) stream.write(body);
  if (end) stream.end();
  return new Promise((resolve, reject) => {
    stream.once('error', reject);
    stream.once('response', (responseHeaders) => {
      stream.setEncoding('utf8');
      let text = '';
      const watchers = new Set<() => void>();
      stream.on('data', (chunk: string) => {
        text += chunk;
        for (const watcher of [...watchers]) watcher();
      });
      const body = new Promise<string>((done, failed) => {
        stream.once('end', () => done(text));
        stream.once('error', failed);
      });
      body.catch(() => undefined);
      resolve({
        stream,
        status: Number(responseHeaders[':status']),
        headers: responseHeaders,
        body,
        until: (predicate) =>
          new Promise((done) => {
            const check = () => {
              if (!predicate(text)) return;
              watchers.delete(check);
              done(text);
            };
            watchers.add(check);
            check();
          }),
      });
    });
  });
}

describe('Fastify over HTTP/2', () => {
  let app: INestApplication;
  let session: http2.ClientHttp2Session;
  /**
   * The headers each answer handed to Node's `writeHead`, by path: Node drops a `Connection` header
   * from an HTTP/2 response with nothing on the wire to show it (only a process warning, which a
   * jest sandbox does not see), so this is where one would show.
   */
  const headWritten = new Map<string, { status: number; headers: Record<string, unknown> }>();

  beforeAll(async () => {
    app = await NestFactory.create(Http2Module, new FastifyAdapter({ http2: true }), { logger: false });
    type RawReply = { raw: { writeHead(status: number, headers?: Record<string, unknown>): unknown } };
    app
      .getHttpAdapter()
      .getInstance()
      .addHook('onRequest', (request: { url: string; headers: Record<string, string | undefined> }, reply: RawReply, done: () => void) => {
        const raw = reply.raw;
        const writeHead = raw.writeHead;
        raw.writeHead = (status, headers) => {
          headWritten.set(`${request.url} ${request.headers['content-type']}`, { status, headers: { ...headers } });
          return writeHead.call(raw, status, headers);
        };
        done();
      });
    await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address() as { port: number };
    session = http2.connect(`http://127.0.0.1:${port}`);
  });
  afterAll(async () => {
    session.destroy();
    await app.close();
  });

  it('answers a call', async () => {
    const answer = await request(session, { ':path': '/rpc', 'content-type': 'application/json' }, '{"jsonrpc":"2.0","method":"add","params":{"a":1,"b":2},"id":1}');
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(answer.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(await answer.body).toBe('{"jsonrpc":"2.0","result":3,"id":1}');
  });

  it('a 413 and a 415 sent before their bodies are read end their own streams; an SSE stream on the same session runs on', async () => {
    const stream = await request(session, { ':path': '/rpc/stream', 'content-type': 'application/json' }, '{"jsonrpc":"2.0","method":"gated","id":1}');
    expect(stream.status).toBe(200);
    expect(stream.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    await stream.until((text) => text === 'data: {"row":1}\n\n');

    // Over the limit by its declared length, the rest of its body still to come.
    const tooLarge = await request(session, { ':path': '/rpc', 'content-type': 'application/json', 'content-length': '4096' }, '{"jsonrpc":', false);
    expect(tooLarge.status).toBe(413);
    const head413 = headWritten.get('/rpc application/json');
    expect(head413?.status).toBe(413);
    const headers413 = Object.keys(head413!.headers);
    expect(headers413).toEqual(expect.arrayContaining(['content-type', 'content-length', 'x-request-id']));
    expect(headers413.map((name) => name.toLowerCase())).not.toContain('connection');
    // The rest of the upload is read and thrown away; the answer ends with it.
    tooLarge.stream.end('x'.repeat(4096 - '{"jsonrpc":'.length));
    expect(await tooLarge.body).toBe('{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: body exceeds 1024 bytes"},"id":null}');

    const wrongType = await request(session, { ':path': '/rpc', 'content-type': 'text/plain' }, 'x');
    expect(wrongType.status).toBe(415);
    expect(await wrongType.body).toBe('{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: Content-Type must be application/json"},"id":null}');

    openGate();
    expect(await stream.body).toBe('data: {"row":1}\n\ndata: {"row":2}\n\nevent: end\ndata: {}\n\n');
    expect(session.closed || session.destroyed).toBe(false);
  });
});
