/**
 * The native path (mcp-native-methods.ts) answers exactly what the SDK answers. Each request below
 * is sent twice to POST /mcp: as is (the native path answers it) and with the native path told to
 * decline (the SDK answers it); status and body must be the same, apart from what the native path
 * adds on purpose (the 2026 `tools/list` cache hints). Requests the native path cannot prove
 * valid must go to the SDK, so their errors stay the SDK's.
 */
import { jest } from '@jest/globals';
import { McpNativeMethods } from '../../libs/server/src/mcp/mcp-native-methods.js';
import type { TestApp } from '../support/rpc-test-app.js';
import { mcpRequest, postMcp, type Era } from './support/mcp-wire.js';
import { startMcpApp } from './support/mcp-test-app.js';

const reader = { 'x-user': 'rita', 'x-roles': 'reader' };

describe.each<Era>(['2025', '2026'])('native MCP methods, %s era: the same answers as the SDK', (era) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startMcpApp();
  });
  afterAll(() => t.close());

  /** The answer of each path, and which one answered the first send. */
  const both = async (request: ReturnType<typeof mcpRequest>) => {
    const answered = jest.spyOn(McpNativeMethods.prototype, 'answer');
    try {
      const native = await postMcp(t.url + '/mcp', request);
      const path = answered.mock.calls.length ? 'native' : 'sdk';
      const declined = jest.spyOn(McpNativeMethods.prototype, 'accept').mockReturnValue(undefined);
      try {
        const sdk = await postMcp(t.url + '/mcp', request);
        return { native, sdk, path };
      } finally {
        declined.mockRestore();
      }
    } finally {
      answered.mockRestore();
    }
  };

  const same: Array<[string, ReturnType<typeof mcpRequest>]> = [
    ['tools/call with structured content', mcpRequest(era, 1, 'tools/call', { name: 'math.add', arguments: { a: 2, b: 3 } })],
    ['tools/call with a string id and plain text', mcpRequest(era, 'e-1', 'tools/call', { name: 'echo', arguments: { text: 'hi' } })],
    ['tools/call with invalid arguments', mcpRequest(era, 2, 'tools/call', { name: 'math.add', arguments: { a: 'x' } })],
    ['tools/call of a method that throws', mcpRequest(era, 3, 'tools/call', { name: 'boom', arguments: {} })],
    ['tools/call without arguments', mcpRequest(era, 4, 'tools/call', { name: 'limited.ping' })],
    ['tools/call of a live stream (aggregated)', mcpRequest(era, 5, 'tools/call', { name: 'chat.stream', arguments: { count: 2 } })],
    ['tools/call of an unknown tool', mcpRequest(era, 6, 'tools/call', { name: 'nope', arguments: {} })],
    ['tools/call of a hidden method', mcpRequest(era, 7, 'tools/call', { name: 'internal.only' })],
    ['tools/call of a role-denied tool', mcpRequest(era, 8, 'tools/call', { name: 'report.daily' })],
    ['tools/call of a protected tool with its role', { ...mcpRequest(era, 9, 'tools/call', { name: 'report.daily' }), headers: { ...mcpRequest(era, 9, 'tools/call', { name: 'report.daily' }).headers, ...reader } }],
    ['tools/call with unrelated _meta', mcpRequest(era, 10, 'tools/call', { name: 'echo', arguments: { text: 'm' } }, { meta: { 'example.com/trace': 'x' } })],
  ];

  it.each(same)('%s', async (_label, request) => {
    const { native, sdk, path } = await both(request);
    expect(path).toBe('native');
    expect(native.status).toBe(sdk.status);
    expect(native.body).toEqual(sdk.body);
  });

  it('tools/list: the same tools; 2026 adds the cache hints (ttlMs, cacheScope) computed from the catalog', async () => {
    for (const headers of [{}, reader]) {
      const request = mcpRequest(era, 11, 'tools/list');
      request.headers = { ...request.headers, ...headers };
      const { native, sdk, path } = await both(request);
      expect(path).toBe('native');
      expect(native.status).toBe(200);
      const { ttlMs, cacheScope, ...rest } = native.body.result;
      const { ttlMs: _sdkTtl, cacheScope: _sdkScope, ...sdkRest } = sdk.body.result;
      expect(rest).toEqual(sdkRest);
      if (era === '2026') expect({ ttlMs, cacheScope }).toEqual({ ttlMs: 300_000, cacheScope: 'private' });
      else expect({ ttlMs, cacheScope }).toEqual({ ttlMs: undefined, cacheScope: undefined });
    }
  });

  if (era === '2025') {
    it('ping', async () => {
      const { native, sdk, path } = await both(mcpRequest(era, 12, 'ping'));
      expect(path).toBe('native');
      expect(native.body).toEqual(sdk.body);
    });
  }

  const fallThrough: Array<[string, ReturnType<typeof mcpRequest>]> = [
    ['a progress token (answered as SSE)', mcpRequest(era, 20, 'tools/call', { name: 'chat.stream', arguments: { count: 2 } }, { meta: { progressToken: 'p' } })],
    // Only a request answered at once (a tasks method, a call creating a task: tasks.e2e-spec) is taken with a token.
    ['a progress token on tools/list', mcpRequest(era, 28, 'tools/list', {}, { meta: { progressToken: 'p' } })],
    ['a progress token that is neither a string nor an integer', mcpRequest(era, 29, 'tools/call', { name: 'echo', arguments: { text: 'x' } }, { meta: { progressToken: 1.5 } })],
    ['arguments that are an array', mcpRequest(era, 21, 'tools/call', { name: 'math.add', arguments: [1, 2] })],
    ['a name that is not a string', mcpRequest(era, 22, 'tools/call', { name: 7 })],
    ['a fractional id', mcpRequest(era, 1.5, 'tools/call', { name: 'echo', arguments: { text: 'x' } })],
    ['a method it does not answer', mcpRequest(era, 23, 'resources/list')],
    ['a text/plain content type', mcpRequest(era, 24, 'tools/call', { name: 'echo', arguments: { text: 'x' } }, { headers: { 'content-type': 'text/plain' } })],
    ['a member JSON-RPC requests do not have', { ...mcpRequest(era, 25, 'tools/list'), body: { ...mcpRequest(era, 25, 'tools/list').body, extra: true } }],
    ['a related task in _meta', mcpRequest(era, 26, 'tools/call', { name: 'echo', arguments: { text: 'x' } }, { meta: { 'io.modelcontextprotocol/related-task': { taskId: 7 } } })],
    ['params that are null', { ...mcpRequest(era, 27, 'tools/list'), body: { jsonrpc: '2.0', id: 27, method: 'tools/list', params: null } }],
  ];
  if (era === '2026') {
    fallThrough.push(
      ['a missing Mcp-Method header', mcpRequest(era, 30, 'tools/call', { name: 'echo', arguments: { text: 'x' } }, { headers: { 'mcp-method': undefined } })],
      ['an Mcp-Method that disagrees with the body', mcpRequest(era, 31, 'tools/call', { name: 'echo', arguments: { text: 'x' } }, { headers: { 'mcp-method': 'tools/list' } })],
      ['a missing Mcp-Name', mcpRequest(era, 32, 'tools/call', { name: 'echo', arguments: { text: 'x' } }, { headers: { 'mcp-name': undefined } })],
      ['an Mcp-Name that disagrees with the body', mcpRequest(era, 33, 'tools/call', { name: 'echo', arguments: { text: 'x' } }, { headers: { 'mcp-name': 'math.add' } })],
      ['a missing MCP-Protocol-Version header', mcpRequest(era, 34, 'tools/call', { name: 'echo', arguments: { text: 'x' } }, { headers: { 'mcp-protocol-version': undefined } })],
      ['an unsupported revision in the envelope', mcpRequest(era, 35, 'tools/list', {}, { meta: { 'io.modelcontextprotocol/protocolVersion': '2099-01-01' }, headers: { 'mcp-protocol-version': '2099-01-01' } })],
      ['an envelope without client capabilities', mcpRequest(era, 36, 'tools/list', {}, { meta: { 'io.modelcontextprotocol/clientCapabilities': undefined } })],
      ['ping (not a 2026 method)', mcpRequest(era, 37, 'ping')],
      ['client info that is not an implementation', mcpRequest(era, 38, 'tools/list', {}, { meta: { 'io.modelcontextprotocol/clientInfo': 5 } })],
      ['capabilities that are not an object (sent twice: a refused envelope is never remembered)', mcpRequest(era, 39, 'tools/list', {}, { capabilities: 'all' as never })],
      ['capabilities that are not an object, again', mcpRequest(era, 40, 'tools/list', {}, { capabilities: 'all' as never })],
      ['an envelope naming 2025-11-25 under a 2026 header', mcpRequest(era, 41, 'tools/list', {}, { meta: { 'io.modelcontextprotocol/protocolVersion': '2025-11-25' } })],
    );
  } else {
    fallThrough.push(
      ['an Accept without text/event-stream', mcpRequest(era, 40, 'tools/list', {}, { headers: { accept: 'application/json' } })],
      ['an unsupported MCP-Protocol-Version header', mcpRequest(era, 41, 'tools/list', {}, { headers: { 'mcp-protocol-version': '1999-01-01' } })],
      ['initialize', mcpRequest(era, 42, 'initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } })],
    );
  }

  it.each(fallThrough)('falls through to the SDK: %s', async (_label, request) => {
    const { native, sdk, path } = await both(request);
    expect(path).toBe('sdk');
    expect(native.status).toBe(sdk.status);
    expect(native.body).toEqual(sdk.body);
  });
});
