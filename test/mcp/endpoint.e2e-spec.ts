/**
 * POST /mcp as HTTP: stateless (no session id, tools/list without initialize), 405 for GET and
 * DELETE, DNS-rebinding protection, the app's hooks and CORS headers kept, the /rpc rate-limit
 * bucket shared, hostile input handled like /rpc params, a client that leaves aborts its stream,
 * a durable method answers its handle.
 */
import { Injectable, Module } from '@nestjs/common';
import { JsonRpcModule, MemoryStreamStore, RpcMcp, RpcMethod, RpcStream } from '@nest-jsonrpc/server';
import { onEveryRequest, startTestApp, type TestApp } from '../support/rpc-test-app.js';
import { startupError } from '../security/security-apps.js';
import { startMcpApp, Tools } from './support/mcp-test-app.js';

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

function mcpPost(t: TestApp, body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<Response> {
  return fetch(`${t.url}/mcp`, { method: 'POST', headers: { ...MCP_HEADERS, ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body), signal });
}

/** The JSON-RPC answer of a 2025-era request, whether sent as JSON or as one SSE event. */
async function answerOf(res: Response): Promise<any> {
  const text = await res.text();
  if (!res.headers.get('content-type')?.startsWith('text/event-stream')) return JSON.parse(text);
  const data = text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)));
  return data.find((m) => 'result' in m || 'error' in m);
}

const request = (method: string, params?: unknown, id = 1) => ({ jsonrpc: '2.0', id, method, ...(params !== undefined && { params }) });

describe('POST /mcp over HTTP', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startMcpApp({}, (app) => {
      app.enableCors({ origin: true, exposedHeaders: ['x-hooked'] });
      onEveryRequest(app, (_request, reply) => reply.header('x-hooked', 'yes'));
    });
  });
  afterAll(() => t.close());

  it('answers tools/list without initialize, without a session id, with the app hook and CORS headers', async () => {
    const res = await mcpPost(t, request('tools/list'), { origin: 'http://localhost:5173' });
    expect(res.status).toBe(200);
    expect(res.headers.get('mcp-session-id')).toBeNull();
    expect(res.headers.get('x-hooked')).toBe('yes');
    expect(res.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    const answer = await answerOf(res);
    expect(answer.result.tools.length).toBeGreaterThan(0);
  });

  it('answers initialize without a session id', async () => {
    const res = await mcpPost(t, request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } }));
    expect(res.status).toBe(200);
    expect(res.headers.get('mcp-session-id')).toBeNull();
    expect((await answerOf(res)).result.serverInfo).toEqual({ name: 'mcp-test', version: '9.9.9' });
  });

  it.each(['GET', 'DELETE'])('answers %s with 405', async (method) => {
    const res = await fetch(`${t.url}/mcp`, { method, headers: { accept: 'text/event-stream' } });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
  });

  it('refuses a Host or an Origin outside mcp.allowedHosts with 403 (DNS rebinding)', async () => {
    const port = new URL(t.url).port;
    const { request: raw } = await import('node:http');
    const status = (headers: Record<string, string>) =>
      new Promise<number>((resolve, reject) => {
        const req = raw({ host: '127.0.0.1', port, path: '/mcp', method: 'POST', headers: { ...MCP_HEADERS, ...headers } }, (res) => {
          res.resume();
          resolve(res.statusCode!);
        });
        req.on('error', reject);
        req.end(JSON.stringify(request('ping')));
      });
    expect(await status({ host: `evil.example:${port}` })).toBe(403);
    expect(await status({ host: `localhost:${port}`, origin: 'http://evil.example' })).toBe(403);
    expect(await status({ host: `localhost:${port}`, origin: 'http://localhost:3000' })).toBe(200);
  });

  it('carries X-Request-Id on every answer — the shared path, the SDK path, SSE, refusals — like /rpc', async () => {
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    const answers: Array<[string, Response]> = [
      ['shared 2025 path (tools/list)', await mcpPost(t, request('tools/list'), { 'x-request-id': 'mcp-1' })],
      ['SDK path (initialize)', await mcpPost(t, request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } }), { 'x-request-id': 'mcp-1' })],
      ['SSE (progress)', await mcpPost(t, request('tools/call', { name: 'echo', arguments: { text: 'hi' }, _meta: { progressToken: 'p' } }), { 'x-request-id': 'mcp-1' })],
      ['parse error', await mcpPost(t, '{"jsonrpc":', { 'x-request-id': 'mcp-1' })],
      ['405', await fetch(`${t.url}/mcp`, { method: 'DELETE', headers: { 'x-request-id': 'mcp-1' } })],
    ];
    for (const [label, res] of answers) {
      await res.text();
      expect([label, res.headers.get('x-request-id')]).toEqual([label, 'mcp-1']);
    }
    const fresh = await mcpPost(t, request('tools/list'));
    expect(fresh.headers.get('x-request-id')).toMatch(uuid);
  });

  it('heads its answers alike on both platforms: JSON with its charset and length (the SDK path too), a notification 202 with no body and no media type', async () => {
    const answers = [
      await mcpPost(t, request('tools/list')),
      await mcpPost(t, request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } })),
    ];
    for (const res of answers) {
      const text = await res.text();
      expect([res.status, res.headers.get('content-type'), res.headers.get('content-length')]).toEqual([200, 'application/json; charset=utf-8', String(Buffer.byteLength(text))]);
    }
    const notified = await mcpPost(t, { jsonrpc: '2.0', method: 'notifications/initialized' });
    expect([notified.status, notified.headers.get('content-type'), await notified.text()]).toEqual([202, null, '']);
  });

  it('answers malformed requests with JSON-RPC errors, never a crash or a stack', async () => {
    const notJson = await mcpPost(t, '{"jsonrpc":');
    expect(notJson.status).toBe(400);
    expect((await notJson.json()).error.code).toBe(-32700);
    for (const body of [{ foo: 1 }, [], request('tools/call', { name: 42 }), request('tools/call', 'x'), request('no/such/method')]) {
      const res = await mcpPost(t, body);
      expect(res.status).toBeLessThan(500);
      expect(await res.text()).not.toMatch(/\bat .+\.(ts|js):\d+/);
    }
  });

  it('answers a body over maxRequestSize with 413', async () => {
    const res = await mcpPost(t, request('tools/call', { name: 'echo', arguments: { text: 'x'.repeat(1_100_000) } }));
    expect(res.status).toBe(413);
  });

  it('handles hostile arguments like /rpc params', async () => {
    const call = async (args: string) => answerOf(await mcpPost(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"math.add","arguments":${args}}}`));
    const polluted = await call('{"a":1,"b":2,"__proto__":{"polluted":true}}');
    expect(polluted.result.structuredContent).toEqual({ sum: 3 });
    expect(({} as any).polluted).toBeUndefined();
    const deep = await call('{"a":' + '['.repeat(5000) + ']'.repeat(5000) + ',"b":1}');
    expect(deep.result ?? deep.error).toBeDefined();
    expect(deep.result?.isError ?? true).toBe(true);
    const huge = await call(`{"a":1,"b":"${'x'.repeat(500_000)}"}`);
    expect(huge.result.isError).toBe(true);
    expect(huge.result.content[0].text.length).toBeLessThan(2_000);
  });

  it('counts MCP calls in the same rate-limit bucket as /rpc', async () => {
    expect((await t.rpc({ jsonrpc: '2.0', id: 1, method: 'limited.ping' })).body.result).toBe('pong');
    const second = await answerOf(await mcpPost(t, request('tools/call', { name: 'limited.ping', arguments: {} })));
    expect(second.result.isError).toBeFalsy();
    const third = await answerOf(await mcpPost(t, request('tools/call', { name: 'limited.ping', arguments: {} })));
    expect(third.result).toMatchObject({ isError: true, _meta: { 'nest-jsonrpc/error': { code: -32003 } } });
    expect(third.result.structuredContent).toBeUndefined();
    expect(third.result.content[0].text).toMatch(/^Error -32003: /);
  });

  it('aborts a stream tool when the client leaves', async () => {
    const tools = t.app.get(Tools);
    const before = tools.aborted;
    const controller = new AbortController();
    const res = await mcpPost(t, request('tools/call', { name: 'slow.stream', arguments: {}, _meta: { progressToken: 'p1' } }), {}, controller.signal);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toContain('notifications/progress');
    controller.abort();
    for (let i = 0; i < 100 && tools.aborted === before; i++) await new Promise((r) => setTimeout(r, 20));
    expect(tools.aborted).toBe(before + 1);
  });
});

@Injectable()
class DurableTools {
  @RpcMethod('report.build')
  @RpcStream({ durable: true })
  @RpcMcp()
  async *build() {
    yield { step: 1 };
  }
}

describe('a durable stream method as a tool', () => {
  let t: TestApp;
  beforeAll(async () => {
    @Module({
      imports: [JsonRpcModule.forRoot({ durable: { enabled: true, store: new MemoryStreamStore() }, mcp: { enabled: true } })],
      providers: [DurableTools],
    })
    class DurableModule {}
    t = await startTestApp(DurableModule);
  });
  afterAll(() => t.close());

  it('answers its handle (stream_id, sse_url) as the result', async () => {
    const answer = await answerOf(await mcpPost(t, request('tools/call', { name: 'report.build', arguments: {} })));
    const handle = JSON.parse(answer.result.content[0].text);
    expect(handle).toMatchObject({ stream_id: expect.any(String), sse_url: `/rpc/streams/${handle.stream_id}` });
  });
});

describe('mcp options', () => {
  it('fail startup on bad values, naming each', async () => {
    const error = await startupError(
      (() => {
        @Module({
          imports: [
            JsonRpcModule.forRoot({
              mcp: { enabled: 'yes', path: 'mcp', exposeAll: 1, include: [3], defaultFormat: 'xml', allowedHosts: ['http://x.com:80'], surprise: true } as any,
            }),
          ],
        })
        class BadOptions {}
        return BadOptions;
      })(),
    );
    for (const fragment of ['"mcp.enabled"', '"mcp.path"', '"mcp.exposeAll"', '"mcp.include"', '"mcp.defaultFormat"', '"mcp.allowedHosts"', 'unknown option "mcp.surprise"']) {
      expect(error.message).toContain(fragment);
    }
  });

  it('fail startup when two tools share a name', async () => {
    @Injectable()
    class Twins {
      @RpcMethod('a.one') @RpcMcp({ name: 'same' }) one() { return 1; }
      @RpcMethod('a.two') @RpcMcp({ name: 'same' }) two() { return 2; }
    }
    @Module({ imports: [JsonRpcModule.forRoot({ mcp: { enabled: true } })], providers: [Twins] })
    class TwinsModule {}
    const error = await startupError(TwinsModule);
    expect(error.message).toContain('MCP tool name "same" is used by methods "a.one" and "a.two"');
  });
});
