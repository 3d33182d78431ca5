/**
 * The official MCP clients against POST /mcp: SDK v2 negotiating the newest protocol
 * (2026-07-28), SDK v2 in 2025 mode, and SDK v1 (a 2025-era client). Each lists the tools the
 * caller may call and calls them through the whole pipeline.
 */
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { TestApp } from '../support/rpc-test-app.js';
import { seen, startMcpApp } from './support/mcp-test-app.js';

interface AnyClient {
  listTools(): Promise<{ tools: any[] }>;
  call(name: string, args: unknown, onprogress?: (p: any) => void): Promise<any>;
  protocolVersion(): string | undefined;
  serverVersion(): { name: string; version: string } | undefined;
  close(): Promise<void>;
}

type Flavour = 'v2 (2026-07-28)' | 'v2 (2025)' | 'v1';

async function connect(flavour: Flavour, url: string, headers: Record<string, string> = {}): Promise<AnyClient> {
  const endpoint = new URL(url + '/mcp');
  if (flavour === 'v1') {
    const client = new ClientV1({ name: 'test-v1', version: '1.0.0' });
    const transport = new TransportV1(endpoint, { requestInit: { headers } });
    await client.connect(transport);
    return {
      listTools: () => client.listTools(),
      call: (name, args, onprogress) => client.callTool({ name, arguments: args as any }, undefined, onprogress ? { onprogress } : undefined),
      protocolVersion: () => transport.protocolVersion,
      serverVersion: () => client.getServerVersion() as any,
      close: () => client.close(),
    };
  }
  const client = new ClientV2({ name: 'test-v2', version: '2.0.0' }, flavour === 'v2 (2026-07-28)' ? { versionNegotiation: { mode: 'auto' } } : {});
  await client.connect(new TransportV2(endpoint, { requestInit: { headers } }));
  return {
    listTools: () => client.listTools(),
    call: (name, args, onprogress) => client.callTool({ name, arguments: args as any }, onprogress ? { onprogress } : undefined),
    protocolVersion: () => (client as any).protocolVersion ?? (client as any).getNegotiatedProtocolVersion?.(),
    serverVersion: () => client.getServerVersion() as any,
    close: () => client.close(),
  };
}

const reader = { 'x-user': 'rita', 'x-roles': 'reader' };

describe.each<Flavour>(['v2 (2026-07-28)', 'v2 (2025)', 'v1'])('MCP over Streamable HTTP with the SDK client %s', (flavour) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startMcpApp();
  });
  afterAll(() => t.close());

  it('initializes with the configured name and version, and negotiates its era', async () => {
    const client = await connect(flavour, t.url);
    expect(client.serverVersion()).toMatchObject({ name: 'mcp-test', version: '9.9.9' });
    if (flavour === 'v2 (2026-07-28)') expect(client.protocolVersion()).toBe('2026-07-28');
    await client.close();
  });

  it('lists the exposed tools an anonymous caller may call, with schemas, titles and annotations', async () => {
    const client = await connect(flavour, t.url);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['math.add', 'math.divide', 'echo', 'account.whoami', 'limited.ping', 'chat.stream', 'numbers.stream', 'slow.stream', 'boom', 'wrapped.value', 'domain.fail']);
    const add = tools.find((tool) => tool.name === 'math.add');
    expect(add).toMatchObject({
      title: 'Add',
      description: 'Adds two numbers',
      annotations: { readOnlyHint: true },
      inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
      outputSchema: { type: 'object', properties: { sum: { type: 'number' } } },
    });
    const boom = tools.find((tool) => tool.name === 'boom');
    expect(boom.inputSchema).toMatchObject({ type: 'object', properties: {} });
    expect(boom.annotations).toBeUndefined();
    expect(boom.outputSchema).toBeUndefined();
    await client.close();
  });

  it('lists a protected tool to a caller with its role, with the hints @RpcCache implies', async () => {
    const client = await connect(flavour, t.url, reader);
    const { tools } = await client.listTools();
    expect(tools.find((tool) => tool.name === 'report.daily')).toMatchObject({ annotations: { readOnlyHint: true, idempotentHint: true } });
    await client.close();
  });

  it('calls a tool through the pipeline: guards see the POST /mcp request, structuredContent and text', async () => {
    const client = await connect(flavour, t.url);
    seen.length = 0;
    const result = await client.call('math.add', { a: 2, b: 3 });
    expect(result).toMatchObject({ content: [{ type: 'text', text: '{"sum":5}' }], structuredContent: { sum: 5 } });
    expect(result.isError).toBeFalsy();
    expect(seen).toEqual([{ method: 'math.add', transport: 'mcp', url: '/mcp' }]);
    expect(await client.call('echo', { text: 'hi there' })).toMatchObject({ content: [{ type: 'text', text: 'hi there' }] });
    await client.close();
  });

  it('answers invalid arguments as an isError result listing every violation', async () => {
    const client = await connect(flavour, t.url);
    const result = await client.call('math.add', { a: 'x' });
    expect(result.isError).toBe(true);
    const lines = result.content[0].text.split('\n');
    expect(lines[0]).toBe('Error -32602: Invalid params');
    expect(lines.slice(1).sort()).toEqual(['  - a: a must be a number conforming to the specified constraints', '  - b: b must be a number conforming to the specified constraints']);
    expect(result.structuredContent).toBeUndefined();
    expect(result._meta['nest-jsonrpc/error']).toMatchObject({ code: -32602, message: 'Invalid params' });
    await client.close();
  });

  it('runs the method interceptors and exception filters', async () => {
    const client = await connect(flavour, t.url);
    expect(await client.call('wrapped.value', { text: 'x' })).toMatchObject({ content: [{ type: 'text', text: '{"wrapped":"x"}' }] });
    expect(await client.call('domain.fail', {})).toMatchObject({ isError: true, content: [{ type: 'text', text: 'Error 4040: Domain: no such invoice' }] });
    await client.close();
  });

  it('answers a non-RPC exception as Error -32603: Internal error, cause not sent', async () => {
    const client = await connect(flavour, t.url);
    const result = await client.call('boom', {});
    expect(result).toMatchObject({ isError: true, content: [{ type: 'text', text: 'Error -32603: Internal error' }] });
    expect(JSON.stringify(result)).not.toContain('secret');
    expect(t.logger.text()).toContain('secret database password');
    await client.close();
  });

  it('treats unknown, hidden and role-denied tools alike: a -32602 protocol error', async () => {
    const client = await connect(flavour, t.url);
    for (const name of ['nope', 'internal.only', 'report.daily']) {
      await expect(client.call(name, {})).rejects.toMatchObject({ code: -32602, message: expect.stringContaining(`Unknown tool: ${name}`) });
    }
    await client.close();
  });

  it('runs a protected, cached tool for a caller with the role (cache shared with /rpc)', async () => {
    const client = await connect(flavour, t.url, reader);
    const result = await client.call('report.daily', {});
    expect(result).toMatchObject({ content: [{ type: 'text', text: '{"rows":3}' }] });
    await client.close();
  });

  it('streams one progress notification per row and answers the concatenated deltas', async () => {
    const client = await connect(flavour, t.url);
    const progress: any[] = [];
    const result = await client.call('chat.stream', { count: 3 }, (p) => progress.push(p));
    expect(progress).toEqual([
      { progress: 1, message: 'w0 ' },
      { progress: 2, message: 'w1 ' },
      { progress: 3, message: 'w2 ' },
    ]);
    expect(result.content[0].text).toBe('"w0 w1 w2 "');
    const rows = await client.call('numbers.stream', { count: 2 });
    expect(JSON.parse(rows.content[0].text)).toEqual([{ n: 0 }, { n: 1 }]);
    await client.close();
  });
});
