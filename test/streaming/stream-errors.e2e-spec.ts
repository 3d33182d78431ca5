/**
 * Errors on /rpc/stream: before the stream starts (plain envelopes with the statuses of docs/streaming.md,
 * nothing streamed, the handler never iterated) and after it started (in-band frames in every
 * format, then a clean end). Also: Nest guards, interceptors and metadata on stream methods, and
 * the startup checks.
 */
import {
  CallHandler,
  CanActivate,
  ExecutionContext,
  Injectable,
  Module,
  NestInterceptor,
  SetMetadata,
  UseGuards,
  UseInterceptors,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { NestFactory } from '@nestjs/core';
import {
  JsonRpcModule,
  RpcCache,
  RpcException,
  RpcMethod,
  RpcRateLimitExceededException,
  RpcStream,
  StreamFormat,
  getRpcContext,
  MemoryStreamStore,
} from '@nest-jsonrpc/server';
import { IsString, MaxLength } from 'class-validator';
import http from 'node:http';
import { interval, map, take, tap } from 'rxjs';
import { CapturingLogger, startTestApp, testAdapter, type TestApp } from '../support/rpc-test-app.js';
import { call, openStream } from './stream-client.js';
import { FORMATS, defineStreamMethods, expectedBody } from './stream-test-methods.js';

const seen = { started: [] as string[], finallyRan: [] as string[], intercepted: [] as string[] };

class PromptDto {
  @IsString()
  @MaxLength(20)
  prompt!: string;
}

const TICKET = 'ticket';
@Injectable()
class TicketGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}
  canActivate(context: ExecutionContext): boolean {
    // Reads metadata from getHandler(): fails if the stream wrapper lost the handler's metadata.
    const needed = this.reflector.get<string>(TICKET, context.getHandler());
    if (needed === undefined) throw new Error('TicketGuard: no metadata on the handler');
    if (context.switchToHttp().getRequest().headers['x-ticket'] !== needed) {
      throw new RpcRateLimitExceededException('Rate limit exceeded for guarded.stream', { data: { retryAfter: 3 } });
    }
    return true;
  }
}

@Injectable()
class TagInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler) {
    seen.intercepted.push(getRpcContext(context)!.method);
    return next.handle().pipe(tap(() => seen.intercepted.push('after')));
  }
}

@Injectable()
class Failing {
  @RpcMethod('validated.stream')
  @RpcStream()
  async *validated(p: PromptDto) {
    seen.started.push('validated');
    yield { prompt: p.prompt };
  }

  @RpcMethod('admin.stream', { roles: ['admin'] })
  @RpcStream()
  async *adminOnly() {
    seen.started.push('admin');
    yield { secret: true };
  }

  @RpcMethod('guarded.stream')
  @RpcStream()
  @SetMetadata(TICKET, 'let-me-in')
  @UseGuards(TicketGuard)
  @UseInterceptors(TagInterceptor)
  guarded() {
    // Through Nest's chain (guard + interceptor), an Observable still streams row by row.
    return interval(30).pipe(take(3), map((i) => ({ i })));
  }

  @RpcMethod('throws.early')
  @RpcStream()
  throwsEarly(): AsyncIterable<unknown> {
    throw new RpcException('Nothing to stream', { code: -32050, data: { why: 'empty' } });
  }

  @RpcMethod('throws.early.odd-data')
  @RpcStream()
  throwsEarlyOddData(): AsyncIterable<unknown> {
    throw new RpcException('Nothing to stream', { code: -32050, data: { big: 10n } });
  }

  @RpcMethod('bigint.row')
  @RpcStream()
  async *bigintRow() {
    try {
      yield { ok: 1 };
      yield { big: 10n };
      yield { never: true };
    } finally {
      seen.finallyRan.push('bigint');
    }
  }
}

defineStreamMethods(Failing, 'rpc-error-after-rows', async function* () {
  yield { n: 1 };
  yield { n: 2 };
  throw new RpcException('Quota exceeded', { code: -32010, data: { left: 0 } });
});
// A generator that fails on its first pull (no yield on purpose): the error comes after the headers.
// eslint-disable-next-line require-yield
defineStreamMethods(Failing, 'rpc-error-first', async function* () {
  throw new RpcException('Upstream unavailable', { code: -32011 });
});
// Error data JSON cannot represent: the frame must still go out (as -32603), never a hung client.
const cyclic: Record<string, unknown> = {};
cyclic.self = cyclic;
defineStreamMethods(Failing, 'unserializable-error-data', async function* () {
  yield { n: 1 };
  throw new RpcException('Has odd data', { code: -32012, data: { big: 10n } });
});
defineStreamMethods(Failing, 'cyclic-error-data', async function* () {
  yield { n: 1 };
  throw new RpcException('Has odd data', { code: -32012, data: cyclic });
});
defineStreamMethods(Failing, 'plain-error-after-rows', async function* () {
  yield 'a';
  throw new Error('disk on fire');
});
// eslint-disable-next-line require-yield
defineStreamMethods(Failing, 'plain-error-first', async function* () {
  throw new TypeError('cannot read properties of undefined');
});

@Module({
  imports: [
    JsonRpcModule.forRoot({
      stream: { enabled: true },
      maxRequestSize: 300,
      security: { rolesResolver: (req) => String(req.headers['x-roles'] ?? '').split(',').filter(Boolean) },
    }),
  ],
  providers: [Failing, TicketGuard, TagInterceptor],
})
class FailingModule {}

describe('errors on /rpc/stream', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(FailingModule);
  });
  afterAll(() => t.close());
  beforeEach(() => {
    seen.started = [];
    seen.finallyRan = [];
    seen.intercepted = [];
  });

  const preStream = async (body: unknown, status: number, expected: unknown, headers?: Record<string, string>) => {
    const res = await t.post(body, { path: '/rpc/stream', headers });
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('x-request-id')).toBeTruthy();
    expect(JSON.parse(await res.text())).toEqual(expected);
    expect(seen.started).toEqual([]);
    return res;
  };

  describe('before the stream starts: a plain envelope, nothing streamed', () => {
    it('parse error -> 400 -32700', () =>
      preStream('{"jsonrpc":"2.0",', 400, { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null }));

    it('invalid request -> 400 -32600', () =>
      preStream({ jsonrpc: '1.0', method: 'validated.stream', id: 1 }, 400, {
        jsonrpc: '2.0',
        error: { code: -32600, message: 'Invalid Request' },
        id: 1,
      }));

    it('a batch -> 400 "Streaming endpoint accepts only a single request"', () =>
      preStream([call('validated.stream', { prompt: 'x' })], 400, {
        jsonrpc: '2.0',
        error: { code: -32600, message: 'Streaming endpoint accepts only a single request' },
        id: null,
      }));

    it('method not found -> 404 -32601', () =>
      preStream(call('nope.stream', {}, 'a'), 404, { jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id: 'a' }));

    it('invalid params -> 400 -32602 with violations', () =>
      preStream(call('validated.stream', { prompt: 42 }, 2), 400, {
        jsonrpc: '2.0',
        error: {
          code: -32602,
          message: 'Invalid params',
          data: [
            { path: 'prompt', message: 'prompt must be shorter than or equal to 20 characters', code: 'maxLength' },
            { path: 'prompt', message: 'prompt must be a string', code: 'isString' },
          ],
        },
        id: 2,
      }));

    it('missing role -> 400 -32001', () =>
      preStream(call('admin.stream', undefined, 3), 400, {
        jsonrpc: '2.0',
        error: { code: -32001, message: 'One of the following roles is required: admin' },
        id: 3,
      }));

    it('the role present -> streams', async () => {
      const s = await openStream(t.url, { body: call('admin.stream'), headers: { 'x-roles': 'user,admin' } });
      expect(await s.ended).toBe('{"secret":true}\n');
    });

    it('rate limited by a guard -> 400 -32003 with Retry-After', async () => {
      const res = await preStream(call('guarded.stream', undefined, 4), 400, {
        jsonrpc: '2.0',
        error: { code: -32003, message: 'Rate limit exceeded for guarded.stream', data: { retryAfter: 3 } },
        id: 4,
      });
      expect(res.headers.get('retry-after')).toBe('3');
      expect(seen.intercepted).toEqual([]);
    });

    it('too large -> 413', () =>
      preStream(call('validated.stream', { prompt: 'x'.repeat(400) }), 413, {
        jsonrpc: '2.0',
        error: { code: -32600, message: 'Invalid Request: body exceeds 300 bytes' },
        id: null,
      }));

    it('a handler throwing before returning its iterable -> plain envelope with its code (-320xx: 500)', () =>
      preStream(call('throws.early', undefined, 5), 500, {
        jsonrpc: '2.0',
        error: { code: -32050, message: 'Nothing to stream', data: { why: 'empty' } },
        id: 5,
      }));

    it('an RpcException whose data JSON cannot represent -> 500 -32603 with the request id, logged', async () => {
      await preStream(call('throws.early.odd-data', undefined, 6), 500, {
        jsonrpc: '2.0',
        error: { code: -32603, message: 'Internal error' },
        id: 6,
      });
      expect(t.logger.text('error')).toContain('Unhandled error in throws.early.odd-data: Do not know how to serialize a BigInt');
    });

    it('wrong media type -> 415', async () => {
      const res = await fetch(`${t.url}/rpc/stream`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' });
      expect(res.status).toBe(415);
      expect(await res.json()).toEqual({
        jsonrpc: '2.0',
        error: { code: -32600, message: 'Invalid Request: Content-Type must be application/json' },
        id: null,
      });
    });
  });

  it('guards, interceptors and handler metadata apply to a stream method, and its Observable streams row by row', async () => {
    const s = await openStream(t.url, { body: call('guarded.stream'), headers: { 'x-ticket': 'let-me-in' } });
    expect(s.status).toBe(200);
    expect(await s.ended).toBe('{"i":0}\n{"i":1}\n{"i":2}\n');
    expect(s.chunks.length).toBeGreaterThanOrEqual(3);
    expect(seen.intercepted).toEqual(['guarded.stream', 'after']);
  });

  describe.each(FORMATS)('after the stream started (%s): in-band error frames, then a clean end', (format) => {
    it('an RpcException after some rows keeps its code, message and data', async () => {
      const s = await openStream(t.url, { body: call(`rpc-error-after-rows.${format}`) });
      expect(s.status).toBe(200);
      expect(await s.ended).toBe(
        expectedBody(format, ['{"n":1}', '{"n":2}'], '{"code":-32010,"message":"Quota exceeded","data":{"left":0}}'),
      );
    });

    it('an RpcException before any row', async () => {
      const s = await openStream(t.url, { body: call(`rpc-error-first.${format}`) });
      expect(s.status).toBe(200);
      expect(await s.ended).toBe(expectedBody(format, [], '{"code":-32011,"message":"Upstream unavailable"}'));
    });

    it('a plain error after rows is -32603 "Internal error", logged with its stack, never sent', async () => {
      const s = await openStream(t.url, { body: call(`plain-error-after-rows.${format}`) });
      const body = await s.ended;
      expect(body).toBe(expectedBody(format, ['"a"'], '{"code":-32603,"message":"Internal error"}'));
      expect(body).not.toContain('disk on fire');
      const logged = t.logger.text('error');
      expect(logged).toContain(`Unhandled error in plain-error-after-rows.${format}: disk on fire`);
      expect(logged).toMatch(/Error: disk on fire\n\s+at /);
    });

    it.each(['unserializable-error-data', 'cyclic-error-data'])(
      'an RpcException whose data JSON cannot represent (%s) still ends the stream, with -32603',
      async (name) => {
        const s = await openStream(t.url, { body: call(`${name}.${format}`) });
        expect(await s.ended).toBe(expectedBody(format, ['{"n":1}'], '{"code":-32603,"message":"Internal error"}'));
        expect(t.logger.text('error')).toContain(`Unhandled error in ${name}.${format}: `);
      },
    );

    it('a plain error before any row', async () => {
      const s = await openStream(t.url, { body: call(`plain-error-first.${format}`) });
      expect(await s.ended).toBe(expectedBody(format, [], '{"code":-32603,"message":"Internal error"}'));
    });
  });

  it('a row JSON cannot represent ends the stream with -32603 and stops the producer', async () => {
    const s = await openStream(t.url, { body: call('bigint.row') });
    expect(await s.ended).toBe('{"ok":1}\n{"error":{"code":-32603,"message":"Internal error"}}\n');
    expect(seen.finallyRan).toEqual(['bigint']);
    expect(t.logger.text('error')).toContain('Unhandled error in bigint.row: Do not know how to serialize a BigInt');
  });

  it('the connection stays usable after an in-band error (clean end, keep-alive reuse)', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const once = () =>
      new Promise<string>((resolve, reject) => {
        const req = http.request(`${t.url}/rpc/stream`, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => resolve(`${req.reusedSocket ? 'reused' : 'new'}:${text}`));
        });
        req.on('error', reject);
        req.end(JSON.stringify(call('rpc-error-first.ndjson')));
      });
    expect(await once()).toBe('new:{"error":{"code":-32011,"message":"Upstream unavailable"}}\n');
    expect(await once()).toBe('reused:{"error":{"code":-32011,"message":"Upstream unavailable"}}\n');
    agent.destroy();
  });
});

describe('startup checks for stream methods', () => {
  const boot = async (module: any) => {
    let app;
    try {
      app = await NestFactory.create(module, testAdapter(), { logger: new CapturingLogger(), abortOnError: false });
      await app.init();
      return 'started';
    } catch (error) {
      return (error as Error).message;
    } finally {
      await app?.close().catch(() => undefined);
    }
  };

  @Injectable()
  class TwoStreams {
    @RpcMethod('a.stream')
    @RpcStream()
    async *a() {}

    @RpcMethod('b.stream')
    @RpcStream({ format: StreamFormat.Sse })
    async *b() {}

    @RpcMethod('durable.job')
    @RpcStream({ durable: true })
    async *durable() {}
  }

  it('a disabled stream route fails startup with one error naming every live stream method', async () => {
    // Durable streams enabled: a durable method is started on /rpc and needs no stream route.
    @Module({ imports: [JsonRpcModule.forRoot({ durable: { enabled: true, store: new MemoryStreamStore() } })], providers: [TwoStreams] })
    class Disabled {}
    const message = await boot(Disabled);
    expect(message).toContain(
      '@RpcStream method(s) "a.stream" (TwoStreams.a), "b.stream" (TwoStreams.b) need the stream route, which is disabled: set JsonRpcModule.forRoot({ stream: { enabled: true } })',
    );
    expect(message).not.toContain('durable.job');
    expect(message.match(/need the stream route/g)).toHaveLength(1);
  });

  it('@RpcStream with @RpcCache fails startup', async () => {
    @Injectable()
    class Cached {
      @RpcMethod('cached.stream')
      @RpcStream()
      @RpcCache({ ttl: 10 })
      async *c() {}
    }
    @Module({ imports: [JsonRpcModule.forRoot({ stream: { enabled: true } })], providers: [Cached] })
    class WithCache {}
    expect(await boot(WithCache)).toContain(
      '"cached.stream" (Cached.c): @RpcStream and @RpcCache cannot be combined (a stream has no single result to cache)',
    );
  });

  it('an unknown format fails startup', async () => {
    @Injectable()
    class Odd {
      @RpcMethod('odd.stream')
      @RpcStream({ format: 'xml' as StreamFormat })
      async *o() {}
    }
    @Module({ imports: [JsonRpcModule.forRoot({ stream: { enabled: true } })], providers: [Odd] })
    class OddModule {}
    expect(await boot(OddModule)).toContain('"odd.stream" (Odd.o): @RpcStream format "xml" is not one of ndjson, sse, json-array');
  });

  it('a keepAliveMs beyond what a Node timer can wait fails startup (it would fire every 1 ms)', async () => {
    @Module({ imports: [JsonRpcModule.forRoot({ stream: { enabled: true, keepAliveMs: 2 ** 31 } })] })
    class HugeKeepAlive {}
    expect(await boot(HugeKeepAlive)).toContain('"stream.keepAliveMs" must be at most 2147483647 (about 24.8 days), got 2147483648');
  });

  it('invalid stream options fail startup, all at once', async () => {
    @Module({
      imports: [
        JsonRpcModule.forRoot({
          stream: { enabled: true, path: '/rpc', keepAliveMs: -1, headers: { 'bad header': 'x', 'x-a': 'a\r\nb', 'Content-Type': 'x' } },
        }),
      ],
    })
    class BadOptions {}
    const message = await boot(BadOptions);
    expect(message).toContain('"stream.keepAliveMs" must be an integer >= 0, got -1');
    expect(message).toContain('"stream.headers": invalid header name "bad header"');
    expect(message).toContain('"stream.headers.x-a" must be a string without line breaks, or null');
    expect(message).toContain('"stream.headers": "Content-Type" is set by the stream format and cannot be configured');
    expect(message).toContain('"stream.path" must differ from "path" (both are "/rpc")');
  });
});
