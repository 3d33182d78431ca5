/**
 * The demo as an agent sees it (README "Plug an agent in"): an MCP client on /mcp lists and calls
 * the demo's tools — a plain one, a protected one, a cached + protected one, a stream with
 * progress — with the same bearer token as on /rpc.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { AppModule } from '../../apps/demo/src/app.module.js';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';

describe('demo: MCP tools for agents', () => {
  let t: TestApp;
  let token: string;
  beforeAll(async () => {
    t = await startTestApp(AppModule);
    token = (await t.rpc({ jsonrpc: '2.0', id: 1, method: 'auth.login', params: { username: 'bob', password: 'bob-pw' } })).body.result.token;
  });
  afterAll(() => t.close());

  async function connect(headers: Record<string, string> = {}) {
    const client = new Client({ name: 'demo-agent', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), { requestInit: { headers } }));
    return client;
  }

  it('lists the public tools to anyone, and the protected ones with a token', async () => {
    const anonymous = await connect();
    expect((await anonymous.listTools()).tools.map((tool) => tool.name).sort()).toEqual(['chat.stream', 'math.add']);
    await anonymous.close();
    const bob = await connect({ authorization: `Bearer ${token}` });
    const tools = (await bob.listTools()).tools;
    expect(tools.map((tool) => tool.name).sort()).toEqual(['account.me', 'chat.stream', 'math.add', 'reports.monthly']);
    expect(tools.find((tool) => tool.name === 'reports.monthly')!.annotations).toEqual({ readOnlyHint: true, idempotentHint: true });
    expect(await bob.callTool({ name: 'account.me', arguments: {} })).toMatchObject({ content: [{ type: 'text', text: '{"id":"bob","roles":["user"]}' }] });
    const first = await bob.callTool({ name: 'reports.monthly', arguments: { month: '2026-01' } });
    const second = await bob.callTool({ name: 'reports.monthly', arguments: { month: '2026-01' } });
    expect(second.content).toEqual(first.content);
    await bob.close();
  });

  it('streams chat.stream tokens as progress notifications and answers the whole reply', async () => {
    const client = await connect();
    const messages: string[] = [];
    const result = await client.callTool({ name: 'chat.stream', arguments: { prompt: 'hello', delayMs: 0 } }, { onprogress: (p) => messages.push(p.message ?? '') });
    expect(messages.length).toBeGreaterThan(1);
    expect(result.content).toEqual([{ type: 'text', text: messages.join('') }]);
    await client.close();
  });

  it('serves a 2025-era client (SDK 1.x) the same tools', async () => {
    const client = new ClientV1({ name: 'old-agent', version: '1.0.0' });
    await client.connect(new TransportV1(new URL(`${t.url}/mcp`)));
    expect(await client.callTool({ name: 'math.add', arguments: { a: 2, b: 40 } })).toMatchObject({ content: [{ type: 'text', text: '{"sum":42}' }] });
    await client.close();
  });

  it('answers the REST surface too', async () => {
    const res = await fetch(`${t.url}/mcp/call`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'math.add', arguments: { a: 1, b: 2 } }) });
    expect(await res.json()).toEqual({ content: [{ type: 'text', text: '{"sum":3}' }], structuredContent: { sum: 3 } });
  });
});
