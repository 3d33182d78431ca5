/**
 * One method written four ways — a class-validator DTO, a zod, a Valibot and an ArkType schema —
 * gives the same results for valid params and the same error code and `data` shape (one
 * `{path, message, code}` per failing field, the same paths) for invalid ones, on every transport:
 * `/rpc`, `/rpc/stream`, a durable start, MCP `tools/call`, MCP REST and `RpcToolset`.
 */
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';
import { schemaAppModule, STYLES, type Style } from './support/schema-methods.js';

const VALID = { email: 'a@b.example', lines: [{ sku: 'x', qty: 2 }, { sku: 'y', qty: 3 }] };
const SUMMARY = { email: 'a@b.example', priority: 3, lines: 2, units: 5, note: null };
/** Four failing fields: a format, a bound, a type inside an array item, a bound inside it. */
const INVALID = { email: 'nope', priority: 11, lines: [{ sku: 'x', qty: 1 }, { sku: 3, qty: 0 }] };
const INVALID_PATHS = ['email', 'lines.1.qty', 'lines.1.sku', 'priority'];

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** Every entry is exactly `{path, message, code}` with a string path, a message and a code. */
function pathsOf(data: unknown): string[] {
  expect(Array.isArray(data)).toBe(true);
  for (const entry of data as object[]) {
    expect(Object.keys(entry).sort()).toEqual(['code', 'message', 'path']);
    const { path, message, code } = entry as { path: unknown; message: unknown; code: unknown };
    expect(typeof path).toBe('string');
    expect(typeof message === 'string' && message.length > 0).toBe(true);
    expect(code === null || typeof code === 'string').toBe(true);
  }
  return (data as Array<{ path: string }>).map((e) => e.path).sort();
}

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp(schemaAppModule());
});
afterAll(() => t.close());

describe.each(STYLES)('the order method written with %s', (style: Style) => {
  const method = (name: string) => `${style}.${name}`;
  const call = async (name: string, params: unknown) => (await t.rpc({ jsonrpc: '2.0', method: method(name), params, id: 1 })).body;

  describe('POST /rpc', () => {
    it('valid params: the same result, the default filled in', async () => {
      expect(await call('order.create', VALID)).toEqual({ jsonrpc: '2.0', result: SUMMARY, id: 1 });
      expect((await call('order.create', { ...VALID, priority: 7, note: null })).result).toEqual({ ...SUMMARY, priority: 7 });
      expect((await call('order.create', { ...VALID, note: 'ring twice' })).result).toEqual({ ...SUMMARY, note: 'ring twice' });
    });

    it('invalid params: -32602 "Invalid params", one entry per failing field, the same paths', async () => {
      const { error } = await call('order.create', INVALID);
      expect(error.code).toBe(-32602);
      expect(error.message).toBe('Invalid params');
      expect(pathsOf(error.data)).toEqual(INVALID_PATHS);
    });

    it.each([
      ['a missing field', { lines: VALID.lines }, ['email']],
      ['an empty array', { email: 'a@b.example', lines: [] }, ['lines']],
      ['an unknown key', { ...VALID, extra: true }, ['extra']],
      ['an unknown key inside an array item', { email: 'a@b.example', lines: [{ sku: 'x', qty: 1, colour: 'red' }] }, ['lines.0.colour']],
      ['a wrong type', { ...VALID, note: 5 }, ['note']],
    ])('%s: the same paths', async (_label, params, paths) => {
      const { error } = await call('order.create', params);
      expect(error.code).toBe(-32602);
      expect(pathsOf(error.data)).toEqual(paths);
    });

    it('params sent as an array or a scalar are -32602 too', async () => {
      expect((await call('order.create', [VALID])).error.code).toBe(-32602);
      expect((await t.rpc({ jsonrpc: '2.0', method: method('order.create'), id: 1 })).body.error.code).toBe(-32602);
    });
  });

  describe('POST /rpc/stream', () => {
    it('valid params: the rows of the validated params', async () => {
      const res = await t.post({ jsonrpc: '2.0', method: method('order.lines'), params: VALID, id: 1 }, { path: '/rpc/stream' });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
      expect((await res.text()).trim().split('\n').map((line) => JSON.parse(line))).toEqual(VALID.lines);
    });

    it('invalid params: a -32602 answer before any row, with the same paths', async () => {
      const res = await t.post({ jsonrpc: '2.0', method: method('order.lines'), params: INVALID, id: 1 }, { path: '/rpc/stream' });
      const body = await res.json();
      expect(body.error.code).toBe(-32602);
      expect(pathsOf(body.error.data)).toEqual(INVALID_PATHS);
    });
  });

  describe('a durable start', () => {
    it('valid params: the stream starts and commits the rows of the validated params', async () => {
      const { result } = await call('order.track', VALID);
      expect(result).toMatchObject({ status: 'running', stream_id: expect.any(String) });
      const events = await (await fetch(t.url + result.sse_url, { headers: { accept: 'text/event-stream' } })).text();
      const rows = events.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6))).filter((d) => d && typeof d === 'object' && 'sku' in d);
      expect(rows).toEqual(VALID.lines);
    });

    it('invalid params: -32602 with the same paths, and no stream is created', async () => {
      const before = (await (await fetch(`${t.url}/rpc/streams`)).json()).streams.length;
      const { error } = await call('order.track', INVALID);
      expect(error.code).toBe(-32602);
      expect(pathsOf(error.data)).toEqual(INVALID_PATHS);
      expect((await (await fetch(`${t.url}/rpc/streams`)).json()).streams.length).toBe(before);
    });
  });

  describe('MCP', () => {
    const tool = async (args: unknown) => {
      const res = await fetch(`${t.url}/mcp`, {
        method: 'POST',
        headers: MCP_HEADERS,
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: method('order.create'), arguments: args } }),
      });
      const text = await res.text();
      const message = res.headers.get('content-type')?.startsWith('text/event-stream')
        ? text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6))).find((m) => 'result' in m || 'error' in m)
        : JSON.parse(text);
      return message.result;
    };

    it('tools/call with valid arguments: the same structured result', async () => {
      const result = await tool(VALID);
      expect(result.isError).toBeUndefined();
      expect(result.structuredContent).toEqual(SUMMARY);
    });

    it('tools/call with invalid arguments: an error result listing the same paths', async () => {
      const result = await tool(INVALID);
      expect(result.isError).toBe(true);
      const [first, ...lines] = result.content[0].text.split('\n');
      expect(first).toBe('Error -32602: Invalid params');
      expect(lines.map((l: string) => /^ {2}- ([^:]+): ./.exec(l)![1]).sort()).toEqual(INVALID_PATHS);
    });

    it('POST /mcp/call (REST): the same result, and the same lines for invalid arguments', async () => {
      const post = async (args: unknown) =>
        (await fetch(`${t.url}/mcp/call`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: method('order.create'), arguments: args }) })).json();
      expect((await post(VALID)).structuredContent).toEqual(SUMMARY);
      const failed = await post(INVALID);
      expect(failed.isError).toBe(true);
      expect(failed.content[0].text.split('\n').slice(1).map((l: string) => /^ {2}- ([^:]+): ./.exec(l)![1]).sort()).toEqual(INVALID_PATHS);
    });
  });

  describe('RpcToolset', () => {
    const run = async (args: unknown) => (await t.rpc({ jsonrpc: '2.0', method: 'tool.run', params: { method: method('order.create'), args }, id: 1 })).body.result;

    it('a tool call with valid arguments: the same result', async () => {
      expect(await run(VALID)).toEqual({ result: SUMMARY });
    });

    it('a tool call with invalid arguments: the -32602 error object and its text, the same paths', async () => {
      const { error, text } = await run(INVALID);
      expect(error.code).toBe(-32602);
      expect(pathsOf(error.data)).toEqual(INVALID_PATHS);
      expect(text.split('\n')[0]).toBe('Error -32602: Invalid params');
      expect(text.split('\n').length).toBe(1 + INVALID_PATHS.length);
    });
  });
});
