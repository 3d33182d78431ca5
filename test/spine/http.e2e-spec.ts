/**
 * The HTTP side: own JSON body parser, content types, size
 * limits (Content-Length and chunked, without buffering past the limit), 405, 200/204,
 * httpStatus mapping, X-Request-Id, deprecation headers.
 */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { gzipSync } from 'node:zlib';
import { Injectable, Module } from '@nestjs/common';
import { IsInt, IsOptional, IsString } from 'class-validator';
import {
  JsonRpcModule,
  RpcAccessDeniedException,
  RpcContext,
  RpcCtx,
  RpcMethod,
  RpcNotFoundException,
  RpcParam,
  RpcRateLimitExceededException,
  type JsonRpcModuleOptions,
} from '@nest-jsonrpc/server';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';

class ProfileDto {
  @IsString() name!: string;
  @IsOptional() @IsInt() age?: number;
}

@Injectable()
class HttpMethods {
  readonly notified: unknown[] = [];

  @RpcMethod('echo')
  echo(params: unknown) {
    return params ?? null;
  }

  @RpcMethod('profile')
  profile(dto: ProfileDto) {
    return { name: dto.name, hasPolluted: 'polluted' in dto, protoIsDto: Object.getPrototypeOf(dto) === ProfileDto.prototype };
  }

  @RpcMethod('size')
  size(@RpcParam('data') data: string) {
    return data.length;
  }

  @RpcMethod('request-id')
  requestId(@RpcCtx() ctx: RpcContext) {
    return ctx.requestId;
  }

  @RpcMethod('notify')
  notify(params: unknown) {
    this.notified.push(params);
  }

  /** Waits until the client goes away (or 3 s), and records what it saw. */
  @RpcMethod('wait-for-abort')
  async waitForAbort(@RpcCtx() ctx: RpcContext) {
    const aborted = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 3000);
      ctx.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
    this.abortsSeen.push(aborted);
    return aborted;
  }

  readonly abortsSeen: boolean[] = [];

  @RpcMethod('fail.not-found') notFound() { throw new RpcNotFoundException(); }
  @RpcMethod('fail.denied') denied() { throw new RpcAccessDeniedException(); }
  @RpcMethod('fail.rate') rate() { throw new RpcRateLimitExceededException(undefined, { data: { retryAfter: 2.2 } }); }
  @RpcMethod('fail.internal') internal() { throw new Error('boom'); }
  @RpcMethod('fail.app-server-error') appServerError() { throw new RpcNotFoundException('Busy', { code: -32050 }); }
  @RpcMethod('fail.app-domain-error') appDomainError() { throw new RpcNotFoundException('Card declined', { code: 1001 }); }
  @RpcMethod('fail.params') params(@RpcParam('n') n: number) { return n; }

  @RpcMethod('old.add', { deprecated: 'use math.add' })
  oldAdd(@RpcParam('a') a: number, @RpcParam('b') b: number) {
    return a + b;
  }

  @RpcMethod('old.ping', { deprecated: true })
  oldPing() {
    return 'pong';
  }
}

function moduleWith(options: JsonRpcModuleOptions = {}) {
  @Module({ imports: [JsonRpcModule.forRoot(options)], providers: [HttpMethods] })
  class HttpModule {}
  return HttpModule;
}

interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/** A request over node:http, for what fetch cannot do (no Content-Type, chunked uploads). */
function raw(url: string, init: { method?: string; headers?: Record<string, string | number>; body?: string | Buffer; path?: string }): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url + (init.path ?? '/rpc'), { method: init.method ?? 'POST', headers: init.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(init.body);
  });
}

const call = (method: string, params?: unknown, id: unknown = 1) =>
  params === undefined ? { jsonrpc: '2.0', method, id } : { jsonrpc: '2.0', method, params, id };
const PARSE_ERROR = { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const JSON_TYPE = 'application/json; charset=utf-8';

describe('HTTP (default options)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(moduleWith({ maxRequestSize: 64 * 1024 }));
  });
  afterAll(() => t.close());

  describe('own JSON body parser', () => {
    it.each([
      ['malformed JSON', '{"jsonrpc":"2.0","method":'],
      ['trailing garbage', '{"jsonrpc":"2.0","method":"echo","id":1} x'],
      ['an empty body', ''],
      ['only whitespace', '  \n '],
      ['single quotes', "{'jsonrpc':'2.0'}"],
      ['a bare word', 'hello'],
    ])('%s -> 200 with a -32700 envelope (id null), never a Fastify 400', async (_label, body) => {
      const res = await t.post(body);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe(JSON_TYPE);
      expect(await res.json()).toEqual(PARSE_ERROR);
    });

    it('an empty body sent with no Content-Type at all -> -32700 too', async () => {
      const res = await raw(t.url, { headers: {} });
      expect(res.status).toBe(200);
      expect(JSON.parse(res.text)).toEqual(PARSE_ERROR);
    });

    it.each([
      ['null', 'null'],
      ['a number', '42'],
      ['a string', '"call me"'],
      ['true', 'true'],
    ])('valid JSON that is not an object or array (%s) -> -32600', async (_label, body) => {
      const res = await t.rpc(body);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request' }, id: null });
    });

    it('a UTF-8 BOM and multi-byte characters are read correctly', async () => {
      const res = await t.rpc('\uFEFF' + JSON.stringify(call('echo', { text: 'ünïcødé ✓ 漢字 🎉' })));
      expect(res.body).toEqual({ jsonrpc: '2.0', result: { text: 'ünïcødé ✓ 漢字 🎉' }, id: 1 });
    });

    it('__proto__ and constructor.prototype keys are dropped: no prototype pollution, anywhere', async () => {
      const hostile =
        '{"jsonrpc":"2.0","method":"echo","id":1,"__proto__":{"polluted":"envelope"},' +
        '"params":{"a":1,"__proto__":{"polluted":"params"},"constructor":{"prototype":{"polluted":"ctor"}},"nested":{"__proto__":{"polluted":"nested"}}}}';
      const res = await t.rpc(hostile);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ jsonrpc: '2.0', result: { a: 1, nested: {} }, id: 1 });
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect((Object.prototype as Record<string, unknown>).polluted).toBeUndefined();

      const dto = await t.rpc('{"jsonrpc":"2.0","method":"profile","id":2,"params":{"name":"x","__proto__":{"polluted":true,"age":"not-int"}}}');
      expect(dto.body).toEqual({ jsonrpc: '2.0', result: { name: 'x', hasPolluted: false, protoIsDto: true }, id: 2 });
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();

      const batch = await t.rpc('[{"jsonrpc":"2.0","method":"echo","id":3,"params":[{"__proto__":{"polluted":1}}]}]');
      expect(batch.body).toEqual([{ jsonrpc: '2.0', result: [{}], id: 3 }]);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });
  });

  describe('hostile shapes', () => {
    const deep = (n: number, inner = '') => '['.repeat(n) + inner + ']'.repeat(n);

    it('a batch nested 30 000 deep is one invalid item, not a crash', async () => {
      const res = await t.rpc(deep(30000));
      expect(res.status).toBe(200);
      expect(res.body).toEqual([{ jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request' }, id: null }]);
    });

    it('params nested 30 000 deep echoed back -> -32603 (the result cannot be serialised), the server lives on', async () => {
      const res = await t.rpc(`{"jsonrpc":"2.0","method":"echo","params":${deep(30000)},"id":1}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: 1 });
      expect((await t.rpc(call('echo', [1]))).body).toEqual({ jsonrpc: '2.0', result: [1], id: 1 });
    });

    it('deep nesting with a __proto__ key inside is still safe', async () => {
      const res = await t.rpc(deep(20000, '{"__proto__":{"polluted":1}}'));
      expect(res.body).toEqual([{ jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request' }, id: null }]);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });
  });

  describe('content types', () => {
    it.each(['application/json', 'application/json; charset=utf-8', 'Application/JSON', 'application/json-rpc', 'application/jsonrequest'])(
      '%s is accepted',
      async (contentType) => {
        const res = await t.rpc(call('echo', [1]), { headers: { 'content-type': contentType } });
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ jsonrpc: '2.0', result: [1], id: 1 });
      },
    );

    it.each(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', 'application/jsonx'])(
      '%s -> 415 with a JSON-RPC error envelope',
      async (contentType) => {
        const res = await t.rpc(call('echo', [1]), { headers: { 'content-type': contentType } });
        expect(res.status).toBe(415);
        expect(res.headers.get('content-type')).toBe(JSON_TYPE);
        expect(res.body).toEqual({
          jsonrpc: '2.0',
          error: { code: -32600, message: 'Invalid Request: Content-Type must be application/json' },
          id: null,
        });
      },
    );

    it('Content-Encoding is interpreted: a gzipped body is inflated (every coding and refusal: test/hardening/compressed-body.e2e-spec.ts)', async () => {
      const res = await raw(t.url, {
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
        body: gzipSync(JSON.stringify(call('echo', [1]))),
      });
      expect(res.status).toBe(200);
      expect(JSON.parse(res.text)).toEqual({ jsonrpc: '2.0', result: [1], id: 1 });
    });

    it('a body without any Content-Type -> 415 with a JSON-RPC error envelope', async () => {
      // The exact length: bytes past a declared Content-Length would be a second (malformed) request.
      const body = JSON.stringify(call('echo', [1]));
      const res = await raw(t.url, { headers: { 'content-length': Buffer.byteLength(body) }, body });
      expect(res.status).toBe(415);
      expect(res.headers['content-type']).toBe(JSON_TYPE);
      expect(JSON.parse(res.text)).toEqual({
        jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request: Content-Type must be application/json' }, id: null,
      });
    });
  });

  describe('methods and statuses', () => {
    it.each(['GET', 'PUT', 'PATCH', 'DELETE'])('%s /rpc -> 405 with Allow: POST and an envelope', async (method) => {
      const res = await fetch(`${t.url}/rpc`, { method });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect(res.headers.get('content-type')).toBe(JSON_TYPE);
      expect(await res.json()).toEqual({ jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request: use POST' }, id: null });
    });

    it('OPTIONS is not answered by the module: it goes on to the app (here Nest\'s 404), with no Allow of the module\'s verbs', async () => {
      for (const path of ['/rpc', '/rpc/stream']) {
        const res = await raw(t.url, { method: 'OPTIONS', path });
        expect([path, res.status, res.headers.allow]).toEqual([path, 404, undefined]);
      }
    });

    it('whole answers say their length (Content-Length, never chunked): a result, a parse error, a 405, a HEAD', async () => {
      const body = JSON.stringify(call('echo', ['é']));
      const answers = [
        await raw(t.url, { headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }, body }),
        await raw(t.url, { headers: { 'content-type': 'application/json', 'content-length': 1 }, body: '{' }),
        await raw(t.url, { method: 'GET' }),
      ];
      expect(answers.map((res) => res.status)).toEqual([200, 200, 405]);
      for (const res of answers) {
        expect([res.headers['content-length'], res.headers['transfer-encoding']]).toEqual([String(Buffer.byteLength(res.text)), undefined]);
      }
      expect(JSON.parse(answers[0].text)).toEqual({ jsonrpc: '2.0', result: ['é'], id: 1 });
      const head = await raw(t.url, { method: 'HEAD' });
      expect([head.status, head.headers['content-length'], head.text]).toEqual([405, String(Buffer.byteLength(answers[2].text)), '']);
    });

    it('a successful call is 200, never 201', async () => {
      const res = await t.rpc(call('echo', [1]));
      expect(res.status).toBe(200);
    });

    it('every error is 200 while httpStatus is off', async () => {
      for (const method of ['fail.not-found', 'fail.denied', 'fail.rate', 'fail.internal', 'missing']) {
        expect((await t.rpc(call(method))).status).toBe(200);
      }
      expect((await t.rpc(call('fail.params', { n: 'x' }))).status).toBe(200);
      expect((await t.rpc('{')).status).toBe(200);
    });

    it('a notification is 204 with no body and no Content-Type', async () => {
      const res = await t.post({ jsonrpc: '2.0', method: 'notify', params: [1] });
      expect(res.status).toBe(204);
      expect(res.headers.get('content-type')).toBeNull();
      expect(await res.text()).toBe('');
    });
  });

  describe('X-Request-Id', () => {
    it('is read into ctx.requestId and echoed', async () => {
      const res = await t.rpc(call('request-id'), { headers: { 'x-request-id': 'trace-abc-123' } });
      expect(res.body.result).toBe('trace-abc-123');
      expect(res.headers.get('x-request-id')).toBe('trace-abc-123');
    });

    it('is generated (a UUID) when absent, and the same id is in ctx and the header', async () => {
      const res = await t.rpc(call('request-id'));
      expect(res.body.result).toMatch(UUID);
      expect(res.headers.get('x-request-id')).toBe(res.body.result);
      const other = await t.rpc(call('request-id'));
      expect(other.body.result).not.toBe(res.body.result);
    });

    it('is shared by every item of a batch', async () => {
      const res = await t.rpc([call('request-id', undefined, 1), call('request-id', undefined, 2), call('request-id', undefined, 3)]);
      const ids = res.body.map((r: { result: string }) => r.result);
      expect(new Set(ids).size).toBe(1);
      expect(ids[0]).toMatch(UUID);
      expect(res.headers.get('x-request-id')).toBe(ids[0]);
    });

    it('an unusable header (spaces, too long) is replaced by a generated id', async () => {
      const spaced = await t.rpc(call('request-id'), { headers: { 'x-request-id': 'has spaces in it' } });
      expect(spaced.body.result).toMatch(UUID);
      const long = await t.rpc(call('request-id'), { headers: { 'x-request-id': 'x'.repeat(201) } });
      expect(long.body.result).toMatch(UUID);
    });

    it('is echoed on 204, parse errors, 405, 413 and 415 too', async () => {
      const headers = { 'x-request-id': 'rid-1' };
      expect((await t.post({ jsonrpc: '2.0', method: 'notify' }, { headers })).headers.get('x-request-id')).toBe('rid-1');
      expect((await t.post('{', { headers })).headers.get('x-request-id')).toBe('rid-1');
      expect((await fetch(`${t.url}/rpc`, { headers })).headers.get('x-request-id')).toBe('rid-1');
      expect((await t.post('x'.repeat(70 * 1024), { headers })).headers.get('x-request-id')).toBe('rid-1');
      expect((await t.post('{}', { headers: { ...headers, 'content-type': 'text/plain' } })).headers.get('x-request-id')).toBe('rid-1');
    });
  });

  describe('clients that vanish, and many at once', () => {
    it('a client that disconnects mid-call aborts ctx.signal; the server logs nothing and serves on', async () => {
      t.logger.lines.length = 0;
      const methods = t.app.get(HttpMethods);
      const controller = new AbortController();
      const pending = fetch(`${t.url}/rpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(call('wait-for-abort')),
        signal: controller.signal,
      }).catch((e: Error) => e.name);
      await new Promise((r) => setTimeout(r, 100));
      controller.abort();
      expect(await pending).toBe('AbortError');
      const deadline = Date.now() + 2000;
      while (methods.abortsSeen.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      expect(methods.abortsSeen).toEqual([true]);
      await new Promise((r) => setTimeout(r, 50));
      expect(t.logger.text('error')).toBe('');
      expect((await t.rpc(call('echo', ['still here']))).body).toEqual({ jsonrpc: '2.0', result: ['still here'], id: 1 });
    });

    it('a call that completes normally does not see an abort', async () => {
      const methods = t.app.get(HttpMethods);
      methods.abortsSeen.length = 0;
      const res = await t.rpc([call('echo', [1], 1)]);
      expect(res.status).toBe(200);
      expect(methods.abortsSeen).toEqual([]);
    });

    it('100 concurrent callers each get their own answer and request id', async () => {
      const answers = await Promise.all(
        Array.from({ length: 100 }, (_, i) => t.rpc(call('request-id', undefined, i), { headers: { 'x-request-id': `caller-${i}` } })),
      );
      answers.forEach((res, i) => {
        expect(res.body).toEqual({ jsonrpc: '2.0', result: `caller-${i}`, id: i });
        expect(res.headers.get('x-request-id')).toBe(`caller-${i}`);
      });
    });
  });

  describe('deprecated methods', () => {
    beforeEach(() => {
      t.logger.lines.length = 0;
    });

    it('add Deprecation: true and X-Rpc-Deprecated: <method>: <reason>, and log a warning', async () => {
      const res = await t.rpc(call('old.add', [1, 2]));
      expect(res.body).toEqual({ jsonrpc: '2.0', result: 3, id: 1 });
      expect(res.headers.get('deprecation')).toBe('true');
      expect(res.headers.get('x-rpc-deprecated')).toBe('old.add: use math.add');
      expect(t.logger.lines.filter((l) => l.level === 'warn').map((l) => l.message)).toEqual([
        'Deprecated JSON-RPC method called: old.add: use math.add',
      ]);
    });

    it('deprecated: true names the method alone', async () => {
      const res = await t.rpc(call('old.ping'));
      expect(res.headers.get('x-rpc-deprecated')).toBe('old.ping');
    });

    it('a batch joins its deprecations with "; " (each once, in call order)', async () => {
      const res = await t.rpc([call('old.ping', undefined, 1), call('echo', [1], 2), call('old.add', [1, 1], 3), call('old.ping', undefined, 4)]);
      expect(res.headers.get('deprecation')).toBe('true');
      expect(res.headers.get('x-rpc-deprecated')).toBe('old.ping; old.add: use math.add');
    });

    it('a notification of a deprecated method still carries the headers on its 204', async () => {
      const res = await t.post({ jsonrpc: '2.0', method: 'old.ping' });
      expect(res.status).toBe(204);
      expect(res.headers.get('x-rpc-deprecated')).toBe('old.ping');
    });

    it('no deprecation headers for methods that are not deprecated', async () => {
      const res = await t.rpc(call('echo', [1]));
      expect(res.headers.get('deprecation')).toBeNull();
      expect(res.headers.get('x-rpc-deprecated')).toBeNull();
    });
  });

  describe('maxRequestSize (64 KiB here)', () => {
    const TOO_LARGE = { jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request: body exceeds 65536 bytes' }, id: null };

    it('a body just under the limit is served', async () => {
      const body = JSON.stringify(call('size', { data: '' }));
      const data = 'a'.repeat(64 * 1024 - body.length);
      const res = await t.rpc(call('size', { data }));
      expect(res.status).toBe(200);
      expect(res.body.result).toBe(data.length);
    });

    it('one byte over (with Content-Length) -> 413 with a -32600 envelope', async () => {
      const body = JSON.stringify(call('size', { data: '' }));
      const res = await t.rpc(call('size', { data: 'a'.repeat(64 * 1024 - body.length + 1) }));
      expect(res.status).toBe(413);
      expect(res.headers.get('content-type')).toBe(JSON_TYPE);
      expect(res.body).toEqual(TOO_LARGE);
    });

    it('a declared Content-Length over the limit is answered 413 at once, before any body is sent', async () => {
      const res = await new Promise<RawResponse>((resolve, reject) => {
        const req = httpRequest(`${t.url}/rpc`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': 10 * 1024 * 1024 },
        }, (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (c: Buffer) => chunks.push(c));
          response.on('end', () => {
            req.destroy();
            resolve({ status: response.statusCode!, headers: response.headers, text: Buffer.concat(chunks).toString() });
          });
        });
        req.on('error', reject);
        req.flushHeaders();
      });
      expect(res.status).toBe(413);
      expect(JSON.parse(res.text)).toEqual(TOO_LARGE);
    });

    it('a chunked upload that keeps sending gets its 413 as soon as it passes the limit', async () => {
      const chunk = Buffer.alloc(16 * 1024, 'a');
      const { status, text, sentWhenAnswered } = await new Promise<{ status: number; text: string; sentWhenAnswered: number }>((resolve, reject) => {
        let sent = 0;
        let answered = false;
        const req = httpRequest(`${t.url}/rpc`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
        }, (response) => {
          answered = true;
          const sentAtAnswer = sent;
          const chunks: Buffer[] = [];
          response.on('data', (c: Buffer) => chunks.push(c));
          response.on('end', () => {
            req.destroy();
            resolve({ status: response.statusCode!, text: Buffer.concat(chunks).toString(), sentWhenAnswered: sentAtAnswer });
          });
        });
        req.on('error', (e) => (answered ? undefined : reject(e)));
        req.write('{"jsonrpc":"2.0","method":"size","id":1,"params":{"data":"');
        // Keeps uploading (up to 8 MiB) until the server answers.
        const pump = () => {
          if (answered || sent > 8 * 1024 * 1024) return;
          sent += chunk.length;
          req.write(chunk, () => setTimeout(pump, 1));
        };
        pump();
      });
      expect(status).toBe(413);
      expect(JSON.parse(text)).toEqual(TOO_LARGE);
      // Answered shortly after the limit, not after the whole upload: the body is not buffered.
      expect(sentWhenAnswered).toBeLessThan(1024 * 1024);
    });

    it('the server still serves normally after oversized requests', async () => {
      expect((await t.rpc(call('echo', [1]))).body).toEqual({ jsonrpc: '2.0', result: [1], id: 1 });
    });
  });
});

describe('HTTP with maxRequestSize: 0 (no limit)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(moduleWith({ maxRequestSize: 0 }));
  });
  afterAll(() => t.close());

  it('accepts a body larger than the 1 MiB default', async () => {
    const data = 'z'.repeat(3 * 1024 * 1024);
    const res = await t.rpc(call('size', { data }));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ jsonrpc: '2.0', result: data.length, id: 1 });
  });
});

describe('HTTP with the default maxRequestSize (1 MiB)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(moduleWith());
  });
  afterAll(() => t.close());

  it('rejects a body over 1 MiB with 413', async () => {
    const res = await t.rpc(call('size', { data: 'z'.repeat(1024 * 1024) }));
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request: body exceeds 1048576 bytes' }, id: null });
  });
});

describe('HTTP with httpStatus.enabled', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(moduleWith({ httpStatus: { enabled: true }, maxRequestSize: 1024 }));
  });
  afterAll(() => t.close());

  it.each([
    ['-32700 parse error', '{', 400, -32700],
    ['-32600 invalid request', { jsonrpc: '1.0', method: 'echo', id: 1 }, 400, -32600],
    ['-32602 invalid params', call('fail.params', { n: 'x' }), 400, -32602],
    ['-32001 access denied', call('fail.denied'), 400, -32001],
    ['-32601 method not found', call('missing'), 404, -32601],
    ['-32002 not found', call('fail.not-found'), 404, -32002],
    ['-32003 rate limit', call('fail.rate'), 429, -32003],
    ['-32603 internal', call('fail.internal'), 500, -32603],
    ['an application server error (-32050)', call('fail.app-server-error'), 500, -32050],
    ['an application domain error (1001)', call('fail.app-domain-error'), 400, 1001],
  ])('%s -> %d', async (_label, body, status, code) => {
    const res = await t.rpc(body);
    expect(res.status).toBe(status);
    expect(res.body.error.code).toBe(code);
  });

  it('a rate-limited answer carries Retry-After (seconds, rounded up)', async () => {
    const res = await t.rpc(call('fail.rate'));
    expect(res.headers.get('retry-after')).toBe('3');
  });

  it('a success is 200, a notification 204 (even one that fails)', async () => {
    expect((await t.rpc(call('echo', [1]))).status).toBe(200);
    const res = await t.post({ jsonrpc: '2.0', method: 'fail.internal' });
    expect(res.status).toBe(204);
  });

  it('a batch takes the highest status of its items', async () => {
    const batch = async (...items: unknown[]) => (await t.rpc(items)).status;
    expect(await batch(call('echo', [1], 1), call('echo', [2], 2))).toBe(200);
    expect(await batch(call('echo', [1], 1), call('fail.denied', undefined, 2))).toBe(400);
    expect(await batch(call('fail.denied', undefined, 1), call('missing', undefined, 2), call('echo', [1], 3))).toBe(404);
    expect(await batch(call('missing', undefined, 1), call('fail.rate', undefined, 2))).toBe(429);
    expect(await batch(call('fail.rate', undefined, 1), call('fail.internal', undefined, 2), call('fail.denied', undefined, 3))).toBe(500);
    // A notification's error does not count: nobody is told about it.
    expect(await batch(call('echo', [1], 1), { jsonrpc: '2.0', method: 'fail.internal' })).toBe(200);
    expect((await t.rpc('[]')).status).toBe(400);
  });

  it('transport errors keep their own statuses: 413, 415, 405', async () => {
    expect((await t.post('x'.repeat(2048))).status).toBe(413);
    expect((await t.post('{}', { headers: { 'content-type': 'text/plain' } })).status).toBe(415);
    expect((await fetch(`${t.url}/rpc`)).status).toBe(405);
  });
});

describe('HTTP on a custom path', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(moduleWith({ path: '/api/jsonrpc' }));
  });
  afterAll(() => t.close());

  it('serves the configured path only', async () => {
    expect((await t.rpc(call('echo', [1]), { path: '/api/jsonrpc' })).body).toEqual({ jsonrpc: '2.0', result: [1], id: 1 });
    expect((await t.post(call('echo', [1]))).status).toBe(404);
  });
});
