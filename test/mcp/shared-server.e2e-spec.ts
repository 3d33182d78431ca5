/**
 * The 2025-era hot path (one SDK server built at startup, mcp-shared-server.ts) answers exactly
 * what the SDK's per-request path answers: every request below is sent twice, once as is (the
 * shared server) and once with an empty `params._meta` (which sends it down the per-request
 * path), and the two answers must be identical — status, content type and message.
 */
import { jest } from '@jest/globals';
import { McpSharedServerTransport } from '../../libs/server/src/mcp/mcp-shared-server.js';
import type { TestApp } from '../support/rpc-test-app.js';
import { startMcpApp } from './support/mcp-test-app.js';

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };
const reader = { 'x-user': 'rita', 'x-roles': 'reader' };

const cases: Array<[string, Record<string, unknown>, Record<string, string>]> = [
  ['tools/list', { method: 'tools/list' }, {}],
  ['tools/list with a role', { method: 'tools/list' }, reader],
  ['a structured result', { method: 'tools/call', params: { name: 'math.add', arguments: { a: 1, b: 2 } } }, {}],
  ['a plain-format result', { method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } }, {}],
  ['invalid arguments', { method: 'tools/call', params: { name: 'math.add', arguments: { a: 'x' } } }, {}],
  ['an unknown tool', { method: 'tools/call', params: { name: 'nope', arguments: {} } }, {}],
  ['a method that is not a tool', { method: 'tools/call', params: { name: 'internal.only' } }, {}],
  ['a role-denied tool', { method: 'tools/call', params: { name: 'report.daily' } }, {}],
  ['a cached tool with the role', { method: 'tools/call', params: { name: 'report.daily' } }, reader],
  ['an internal error', { method: 'tools/call', params: { name: 'boom', arguments: {} } }, {}],
  ['a stream tool without progress', { method: 'tools/call', params: { name: 'numbers.stream', arguments: { count: 2 } } }, {}],
  ['a missing tool name', { method: 'tools/call', params: { arguments: {} } }, {}],
  ['arguments that are not an object', { method: 'tools/call', params: { name: 'math.add', arguments: [1, 2] } }, {}],
  ['ping', { method: 'ping' }, {}],
];

describe('the shared 2025-era server answers as the SDK per-request path does', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startMcpApp();
  });
  afterAll(() => t.close());

  async function send(message: Record<string, unknown>, headers: Record<string, string> = {}) {
    const res = await fetch(`${t.url}/mcp`, { method: 'POST', headers: { ...HEADERS, ...headers }, body: JSON.stringify(message) });
    return { status: res.status, type: res.headers.get('content-type')?.split(';')[0], body: JSON.parse(await res.text()) };
  }

  it.each(cases)('%s', async (_label, message, headers) => {
    const calls = jest.spyOn(McpSharedServerTransport.prototype, 'call');
    try {
      const request = { jsonrpc: '2.0', id: 7, ...message };
      const shared = await send(request, headers);
      expect(calls).toHaveBeenCalledTimes(1);
      const params = { ...(message.params as object | undefined), _meta: {} };
      const perRequest = await send({ ...request, params }, headers);
      expect(calls).toHaveBeenCalledTimes(1);
      expect(shared).toEqual(perRequest);
    } finally {
      calls.mockRestore();
    }
  });

  it('keeps the client id (a string too) and serves concurrent callers without mixing them up', async () => {
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => send({ jsonrpc: '2.0', id: `c${i}`, method: 'tools/call', params: { name: 'math.add', arguments: { a: i, b: 1 } } })),
    );
    answers.forEach((answer, i) => expect(answer.body).toMatchObject({ id: `c${i}`, result: { structuredContent: { sum: i + 1 } } }));
  });

  it.each([
    ['initialize', { method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }, HEADERS],
    ['a progress token', { method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' }, _meta: { progressToken: 1 } } }, HEADERS],
    ['a batch', [{ method: 'ping' }], HEADERS],
    ['no Accept of SSE', { method: 'ping' }, { ...HEADERS, accept: 'application/json' }],
    ['an unsupported protocol version header', { method: 'ping' }, { ...HEADERS, 'mcp-protocol-version': '1999-01-01' }],
  ])('leaves %s to the SDK per-request path', async (_label, message, headers) => {
    const calls = jest.spyOn(McpSharedServerTransport.prototype, 'call');
    try {
      const body = Array.isArray(message) ? message.map((m) => ({ jsonrpc: '2.0', id: 1, ...m })) : { jsonrpc: '2.0', id: 1, ...message };
      const res = await fetch(`${t.url}/mcp`, { method: 'POST', headers, body: JSON.stringify(body) });
      await res.text();
      expect(calls).not.toHaveBeenCalled();
    } finally {
      calls.mockRestore();
    }
  });
});
