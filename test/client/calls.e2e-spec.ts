/**
 * call / notify / batch of @nest-jsonrpc/client against the real @nest-jsonrpc/server over HTTP,
 * plus the failure classes a real network and misbehaving proxies produce.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Injectable, Module } from '@nestjs/common';
import { IsInt } from 'class-validator';
import { JsonRpcModule, RpcCtx, RpcException, RpcMethod, RpcParam, type RpcContext } from '@nest-jsonrpc/server';
import {
  JsonRpcClient,
  JsonRpcError,
  JsonRpcProtocolError,
  JsonRpcResponseTooLargeError,
  JsonRpcTimeoutError,
  JsonRpcTransportError,
} from '@nest-jsonrpc/client';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';
import { refusedUrl, rejection } from './test-helpers.js';

class AddDto {
  @IsInt() a!: number;
  @IsInt() b!: number;
}

@Injectable()
class CallMethods {
  readonly notified: unknown[] = [];

  @RpcMethod('math.add')
  add(p: AddDto) {
    return { sum: p.a + p.b };
  }

  @RpcMethod('math.subtract')
  subtract(@RpcParam('minuend') a: number, @RpcParam('subtrahend') b: number) {
    return a - b;
  }

  @RpcMethod('echo.headers')
  headers(_p: unknown, @RpcCtx() ctx: RpcContext) {
    const h = ctx.request.headers;
    return { tenant: h['x-tenant'] ?? null, trace: h['x-trace'] ?? null, contentType: h['content-type'], accept: h.accept };
  }

  @RpcMethod('fail.custom')
  failCustom() {
    throw new RpcException('Quota exhausted', { code: -32050, data: { quota: 10 } });
  }

  @RpcMethod('slow')
  async slow(p: { ms: number }) {
    await new Promise((r) => setTimeout(r, p.ms));
    return 'late';
  }

  @RpcMethod('log')
  log(p: unknown) {
    this.notified.push(p);
  }

  @RpcMethod('big')
  big(p: { n: number }) {
    return 'x'.repeat(p.n);
  }
}

@Module({ imports: [JsonRpcModule.forRoot({ maxBatchSize: 5 })], providers: [CallMethods] })
class CallsModule {}

@Module({ imports: [JsonRpcModule.forRoot({ httpStatus: { enabled: true } })], providers: [CallMethods] })
class HttpStatusModule {}

describe('client calls against the real server', () => {
  let t: TestApp;
  let client: JsonRpcClient;
  beforeAll(async () => {
    t = await startTestApp(CallsModule);
    client = new JsonRpcClient({ url: `${t.url}/rpc` });
  });
  afterAll(() => t.close());

  it('call resolves the result, with named and positional params', async () => {
    expect(await client.call('math.add', { a: 2, b: 3 })).toEqual({ sum: 5 });
    expect(await client.call('math.subtract', [42, 23])).toBe(19);
    expect(await client.call<number>('math.subtract', { subtrahend: 23, minuend: 42 })).toBe(19);
  });

  it('call rejects with JsonRpcError carrying code, message, data and the call id', async () => {
    const error = await rejection(client.call('math.add', { a: 'x', b: 3 }));
    expect(error).toBeInstanceOf(JsonRpcError);
    expect(error).toMatchObject({ name: 'JsonRpcError', code: -32602, message: 'Invalid params', status: 200 });
    expect(error.data).toEqual([{ path: 'a', message: expect.any(String), code: 'isInt' }]);
    expect(typeof error.id).toBe('number');

    const custom = await rejection(client.call('fail.custom'));
    expect(custom.toJSON()).toEqual({ code: -32050, message: 'Quota exhausted', data: { quota: 10 }, id: custom.id });
    await expect(client.call('no.such')).rejects.toMatchObject({ code: -32601, message: 'Method not found' });
  });

  it('ids increase per call and match the answers', async () => {
    const ids: number[] = [];
    const spying = new JsonRpcClient({
      url: `${t.url}/rpc`,
      fetch: async (input, init) => {
        ids.push(JSON.parse(String(init!.body)).id);
        return fetch(input, init);
      },
    });
    await Promise.all([spying.call('math.add', { a: 1, b: 1 }), spying.call('math.add', { a: 2, b: 2 })]);
    expect(ids).toEqual([1, 2]);
  });

  it('notify sends no id, resolves undefined, and the handler runs', async () => {
    const methods = t.app.get(CallMethods);
    methods.notified.length = 0;
    let sent: any;
    const spying = new JsonRpcClient({
      url: `${t.url}/rpc`,
      fetch: async (input, init) => {
        sent = JSON.parse(String(init!.body));
        const res = await fetch(input, init);
        expect(res.status).toBe(204);
        return res;
      },
    });
    await expect(spying.notify('log', { line: 'hello' })).resolves.toBeUndefined();
    expect(sent).toEqual({ jsonrpc: '2.0', method: 'log', params: { line: 'hello' } });
    expect(methods.notified).toEqual([{ line: 'hello' }]);
    // a notification of an unknown method is still silent (spec §4.1)
    await expect(client.notify('no.such')).resolves.toBeUndefined();
  });

  it('batch resolves an allSettled-shaped array aligned with the input', async () => {
    const settled = await client.batch([
      { method: 'math.add', params: { a: 1, b: 2 } },
      { method: 'log', params: ['from batch'], notification: true },
      { method: 'no.such' },
      { method: 'math.subtract', params: [10, 4] },
      { method: 'fail.custom' },
    ]);
    expect(settled).toHaveLength(5);
    expect(settled[0]).toEqual({ status: 'fulfilled', value: { sum: 3 } });
    expect(settled[1]).toEqual({ status: 'fulfilled', value: undefined });
    expect(settled[2].status).toBe('rejected');
    expect((settled[2] as any).reason).toBeInstanceOf(JsonRpcError);
    expect((settled[2] as any).reason).toMatchObject({ code: -32601 });
    expect(settled[3]).toEqual({ status: 'fulfilled', value: 6 });
    expect((settled[4] as any).reason).toMatchObject({ code: -32050, data: { quota: 10 } });
  });

  it('a batch of notifications only resolves all-fulfilled undefined (the server answers 204)', async () => {
    expect(await client.batch([{ method: 'log', params: [1], notification: true }, { method: 'log', params: [2], notification: true }])).toEqual([
      { status: 'fulfilled', value: undefined },
      { status: 'fulfilled', value: undefined },
    ]);
  });

  it('an empty batch resolves [] without a request', async () => {
    const none = new JsonRpcClient({ url: `${t.url}/rpc`, fetch: () => Promise.reject(new Error('must not be called')) });
    expect(await none.batch([])).toEqual([]);
  });

  it('a batch the server refuses as a whole (too large) rejects with its JsonRpcError', async () => {
    const error = await rejection(client.batch(Array.from({ length: 6 }, () => ({ method: 'math.add', params: { a: 1, b: 1 } }))));
    expect(error).toBeInstanceOf(JsonRpcError);
    expect(error.code).toBe(-32600);
    expect(error.id).toBeNull();
  });

  it('client headers (static or a function) and per-call headers are sent; protocol headers win', async () => {
    let n = 0;
    const withHeaders = new JsonRpcClient({ url: `${t.url}/rpc`, headers: async () => ({ 'x-tenant': `t${++n}`, 'content-type': 'text/plain' }) });
    expect(await withHeaders.call('echo.headers')).toEqual({ tenant: 't1', trace: null, contentType: 'application/json', accept: 'application/json' });
    expect(await withHeaders.call('echo.headers', undefined, { headers: { 'x-trace': 'abc', 'x-tenant': 'override' } })).toMatchObject({ tenant: 'override', trace: 'abc' });
    const staticHeaders = new JsonRpcClient({ url: `${t.url}/rpc`, headers: { 'x-tenant': 'static' } });
    expect(await staticHeaders.call('echo.headers')).toMatchObject({ tenant: 'static' });
  });

  it('aborting the signal rejects with the signal reason (not wrapped)', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 30);
    const error = await rejection(client.call('slow', { ms: 1000 }, { signal: controller.signal }));
    expect(error.name).toBe('AbortError');
    const already = AbortSignal.abort(new Error('nope'));
    await expect(client.call('math.add', { a: 1, b: 1 }, { signal: already })).rejects.toThrow('nope');
  });

  it('timeoutMs rejects with JsonRpcTimeoutError (a kind of JsonRpcTransportError)', async () => {
    const slowClient = new JsonRpcClient({ url: `${t.url}/rpc`, timeoutMs: 50 });
    const error = await rejection(slowClient.call('slow', { ms: 500 }));
    expect(error).toBeInstanceOf(JsonRpcTimeoutError);
    expect(error).toBeInstanceOf(JsonRpcTransportError);
    expect(error.message).toBe(`no answer from ${t.url}/rpc within 50 ms (timeoutMs)`);
    expect(await slowClient.call('slow', { ms: 1 }, { timeoutMs: 1000 })).toBe('late');
  });

  it('maxResponseBytes bounds what a call reads', async () => {
    const small = new JsonRpcClient({ url: `${t.url}/rpc`, maxResponseBytes: 1000 });
    expect(await small.call('big', { n: 900 })).toHaveLength(900);
    const error = await rejection(small.call('big', { n: 5000 }));
    expect(error).toBeInstanceOf(JsonRpcResponseTooLargeError);
    expect(error).toBeInstanceOf(JsonRpcProtocolError);
    expect(error.message).toBe('the answer (HTTP 200) exceeds maxResponseBytes (1000 bytes); the client stopped reading');
  });

  it('a request the server rejects as too large (413) is that JsonRpcError', async () => {
    const error = await rejection(client.call('log', { text: 'y'.repeat(1_100_000) }));
    expect(error).toBeInstanceOf(JsonRpcError);
    expect(error).toMatchObject({ code: -32600, status: 413, id: null });
  });
});

describe('client calls with httpStatus.enabled (errors on 4xx/5xx statuses)', () => {
  let t: TestApp;
  let client: JsonRpcClient;
  beforeAll(async () => {
    t = await startTestApp(HttpStatusModule);
    client = new JsonRpcClient({ url: `${t.url}/rpc` });
  });
  afterAll(() => t.close());

  it('errors keep their code and carry the HTTP status', async () => {
    await expect(client.call('no.such')).rejects.toMatchObject({ name: 'JsonRpcError', code: -32601, status: 404 });
    await expect(client.call('math.add', { a: 'x', b: 1 })).rejects.toMatchObject({ code: -32602, status: 400 });
    expect(await client.call('math.add', { a: 1, b: 1 })).toEqual({ sum: 2 });
  });

  it('a batch answered with its worst status still settles every entry', async () => {
    const settled = await client.batch([{ method: 'math.add', params: { a: 1, b: 1 } }, { method: 'no.such' }]);
    expect(settled[0]).toEqual({ status: 'fulfilled', value: { sum: 2 } });
    expect((settled[1] as any).reason).toMatchObject({ code: -32601, status: 404 });
  });
});

describe('client calls against broken servers and networks', () => {
  let server: Server;
  let url = '';
  let answer: (res: import('node:http').ServerResponse, body: any) => void = () => undefined;
  beforeAll(async () => {
    server = createServer((req, res) => {
      let text = '';
      req.on('data', (c) => (text += c));
      req.on('end', () => answer(res, text ? JSON.parse(text) : undefined));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/rpc`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('a proxy error page is a JsonRpcProtocolError with status and a snippet of the body', async () => {
    answer = (res) => res.writeHead(502, { 'content-type': 'text/html' }).end('<html><h1>502 Bad Gateway</h1></html>');
    const error = await rejection(new JsonRpcClient({ url }).call('x'));
    expect(error).toBeInstanceOf(JsonRpcProtocolError);
    expect(error).toMatchObject({ status: 502, contentType: 'text/html', snippet: '<html><h1>502 Bad Gateway</h1></html>' });
    expect(error.message).toBe('not a JSON-RPC answer (HTTP 502): HTTP 502 Bad Gateway');
  });

  it.each([
    ['non-JSON with 200', (res: any) => res.writeHead(200).end('hello'), 'not a JSON-RPC answer: the body (no Content-Type) is not JSON'],
    ['an empty 200', (res: any) => res.writeHead(200).end(), 'not a JSON-RPC answer: no answer body (HTTP 200) to call 1'],
    ['a 204 to a call', (res: any) => res.writeHead(204).end(), 'not a JSON-RPC answer: no answer body (HTTP 204) to call 1'],
    ['JSON that is no response object', (res: any) => res.writeHead(200).end('{"ok":true}'), 'not a JSON-RPC answer: expected a JSON-RPC response object'],
    ['the wrong id', (res: any) => res.writeHead(200).end('{"jsonrpc":"2.0","result":1,"id":99}'), "not a JSON-RPC answer: the answer's id 99 is not the call's id 1"],
    ['both result and error', (res: any) => res.writeHead(200).end('{"jsonrpc":"2.0","result":1,"error":{"code":1,"message":"m"},"id":1}'), 'not a JSON-RPC answer: expected a JSON-RPC response object'],
  ])('%s is a JsonRpcProtocolError', async (_what, reply, message) => {
    answer = reply;
    const error = await rejection(new JsonRpcClient({ url }).call('x'));
    expect(error).toBeInstanceOf(JsonRpcProtocolError);
    expect(error.message).toBe(message);
  });

  it('a batch answer missing an entry rejects just that entry with a JsonRpcProtocolError', async () => {
    answer = (res, body) => res.writeHead(200).end(JSON.stringify([{ jsonrpc: '2.0', result: 'a', id: body[0].id }]));
    const settled = await new JsonRpcClient({ url }).batch([{ method: 'a' }, { method: 'b' }]);
    expect(settled[0]).toEqual({ status: 'fulfilled', value: 'a' });
    expect((settled[1] as any).reason).toBeInstanceOf(JsonRpcProtocolError);
    expect((settled[1] as any).reason.message).toBe('not a JSON-RPC answer: the batch answer has no response for id 2');
  });

  it('a connection dropped before the answer is a JsonRpcTransportError', async () => {
    answer = (res) => res.socket!.destroy();
    const error = await rejection(new JsonRpcClient({ url }).call('x'));
    expect(error).toBeInstanceOf(JsonRpcTransportError);
    expect(error.message).toBe(`POST ${url} failed: fetch failed (other side closed)`);
  });

  it('a refused connection is a JsonRpcTransportError naming the cause', async () => {
    const refused = await refusedUrl('/rpc');
    const error = await rejection(new JsonRpcClient({ url: refused }).call('x'));
    expect(error).toBeInstanceOf(JsonRpcTransportError);
    expect(error.message).toBe(`POST ${refused} failed: fetch failed (connect ECONNREFUSED ${refused.slice(7, -4)})`);
  });
});
