/**
 * The demo as an agent sees it (README "Plug an agent in"): an MCP client on /mcp lists and calls
 * the demo's tools — a plain one, a protected one, a cached + protected one, a stream with
 * progress, a durable report as an MCP task — with the same bearer token as on /rpc; and, with
 * `MCP_OAUTH_ISSUER` set, an agent that only knows the URL connects through OAuth discovery
 * against the demo's development authorization server and calls a protected tool.
 */
import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NestFactory } from '@nestjs/core';
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { AppModule } from '../../apps/demo/src/app.module.js';
import { eventually } from '../support/async.js';
import type { INestApplication } from '@nestjs/common';
import { CapturingLogger, testAdapter } from '../support/rpc-test-app.js';
import { mcpRequest, postMcp, TASKS_EXTENSION } from './support/mcp-wire.js';
import { freePort, startAuthorizationServer, UnattendedOAuthProvider, type TestAuthorizationServer } from './support/oauth.js';

/**
 * The demo as `npm start` wires it, on `port` (0: a free one), with `env` set while it starts, its
 * durable SQLite file in a directory of its own (a demo booting in a parallel suite must not mark
 * this one's streams interrupted).
 */
interface DemoApp {
  url: string;
  rpc(body: unknown, init?: { path?: string; headers?: Record<string, string> }): Promise<{ status: number; headers: Headers; body: any }>;
  close(): Promise<void>;
}

async function startDemo(port = 0, env: Record<string, string> = {}): Promise<DemoApp> {
  const dataDir = mkdtempSync(join(tmpdir(), 'nest-jsonrpc-mcp-demo-'));
  const cwd = process.cwd();
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  let app: INestApplication;
  const logger = new CapturingLogger();
  try {
    process.chdir(dataDir);
    Object.assign(process.env, env);
    app = await NestFactory.create<INestApplication>(AppModule, testAdapter(), { logger });
    await app.listen(port, '127.0.0.1');
  } finally {
    process.chdir(cwd);
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
  const url = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
  const post = (body: unknown, init: { path?: string; headers?: Record<string, string> } = {}) =>
    fetch(url + (init.path ?? '/rpc'), { method: 'POST', headers: { 'content-type': 'application/json', ...init.headers }, body: JSON.stringify(body) });
  return {
    url,
    rpc: async (body, init) => {
      const res = await post(body, init);
      const text = await res.text();
      return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
    },
    close: async () => {
      await app.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

describe('demo: MCP tools for agents', () => {
  let t: DemoApp;
  let token: string;
  beforeAll(async () => {
    t = await startDemo();
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
    expect((await anonymous.listTools()).tools.map((tool) => tool.name).sort()).toEqual(['chat.stream', 'math.add', 'orders.place', 'report.generate']);
    await anonymous.close();
    const bob = await connect({ authorization: `Bearer ${token}` });
    const tools = (await bob.listTools()).tools;
    expect(tools.map((tool) => tool.name).sort()).toEqual(['account.me', 'chat.stream', 'math.add', 'orders.place', 'report.generate', 'reports.monthly']);
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

  it('orders.place, a zod-validated tool: its inputSchema and outputSchema from the schema, structured results, violations listed', async () => {
    const client = await connect();
    const tool = (await client.listTools()).tools.find((t) => t.name === 'orders.place')!;
    expect(tool.inputSchema).toMatchObject({ type: 'object', required: ['customer', 'lines', 'shipping'], additionalProperties: false });
    expect(Object.keys(tool.inputSchema.properties!).sort()).toEqual(['coupon', 'customer', 'giftNote', 'lines', 'shipping']);
    // The named Address schema is a $defs entry of the standalone schema.
    expect(JSON.stringify(tool.inputSchema)).toContain('"$ref":"#/$defs/Address"');
    expect(tool.outputSchema).toMatchObject({ type: 'object', required: ['orderId', 'customer', 'items', 'totalCents', 'shipping', 'giftNote'] });
    const placed = await client.callTool({
      name: 'orders.place',
      arguments: { customer: { email: 'ada@example.com', name: ' Ada ' }, lines: [{ sku: 'BOK-001', qty: 2 }, { sku: 'PEN-002', qty: 1 }], shipping: { method: 'pickup' }, coupon: 'welcome10' },
    });
    expect(placed.structuredContent).toEqual({ orderId: expect.stringMatching(/^ord-[0-9]+$/), customer: 'Ada', items: 3, totalCents: 2520, shipping: 'pickup', giftNote: null });
    const refused = await client.callTool({ name: 'orders.place', arguments: { customer: { email: 'x', name: 'Ada' }, lines: [{ sku: 'nope', qty: 0 }], shipping: { method: 'delivery' } } });
    expect(refused.isError).toBe(true);
    expect((refused.content as Array<{ text: string }>)[0].text.split('\n')).toEqual([
      'Error -32602: Invalid params',
      '  - customer.email: Invalid email address',
      '  - lines.0.sku: A SKU looks like ABC-123',
      '  - lines.0.qty: Too small: expected number to be >=1',
      '  - shipping.address: Invalid input: expected object, received undefined',
    ]);
    await client.close();
  });

  it('serves a 2025-era client (SDK 1.x) the same tools', async () => {
    const client = new ClientV1({ name: 'old-agent', version: '1.0.0' });
    await client.connect(new TransportV1(new URL(`${t.url}/mcp`)));
    expect(await client.callTool({ name: 'math.add', arguments: { a: 2, b: 40 } })).toMatchObject({ content: [{ type: 'text', text: '{"sum":42}' }] });
    await client.close();
  });

  it('runs the durable report as an MCP task: polled to its end, or cancelled', async () => {
    const headers = { authorization: `Bearer ${token}` };
    const send = (method: string, params: Record<string, unknown>) => {
      const request = mcpRequest('2026', method, method, params, { capabilities: { extensions: { [TASKS_EXTENSION]: {} } } });
      request.headers = { ...request.headers, ...headers };
      return postMcp(`${t.url}/mcp`, request);
    };
    const created = (await send('tools/call', { name: 'report.generate', arguments: { steps: 2, delayMs: 10 } })).body.result;
    expect(created).toMatchObject({ resultType: 'task', status: 'working' });
    const done = await eventually(async () => {
      const task = (await send('tasks/get', { taskId: created.taskId })).body.result;
      return task.status === 'completed' ? task : undefined;
    }, 10_000, 'the report task to complete');
    expect(JSON.parse(done.result.content[0].text)).toEqual([{ report: expect.stringMatching(/^\/reports\/.+\.pdf$/), pages: 6 }]);
    const long = (await send('tools/call', { name: 'report.generate', arguments: { steps: 50, delayMs: 1000 } })).body.result;
    const working = await eventually(async () => {
      const task = (await send('tasks/get', { taskId: long.taskId })).body.result;
      return task.statusMessage ? task : undefined;
    }, 10_000, 'the first progress row');
    expect(JSON.parse(working.statusMessage)).toEqual({ percent: 2, stage: 'collecting invoices' });
    expect((await send('tasks/cancel', { taskId: long.taskId })).body.result.resultType).toBe('complete');
    expect((await send('tasks/get', { taskId: long.taskId })).body.result.status).toBe('cancelled');
  });

  it('answers the REST surface too', async () => {
    const res = await fetch(`${t.url}/mcp/call`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'math.add', arguments: { a: 1, b: 2 } }) });
    expect(await res.json()).toEqual({ content: [{ type: 'text', text: '{"sum":3}' }], structuredContent: { sum: 3 } });
  });
});

describe('demo: an agent connects through OAuth discovery (MCP_OAUTH_ISSUER)', () => {
  let as: TestAuthorizationServer;
  let t: DemoApp;
  beforeAll(async () => {
    as = await startAuthorizationServer();
    const port = await freePort();
    t = await startDemo(port, { MCP_OAUTH_ISSUER: as.issuer, PORT: String(port), HOST: '127.0.0.1' });
  });
  afterAll(async () => {
    await t?.close();
    await as?.stop();
  });

  it('is challenged for a protected tool, authorizes at the demo\'s authorization server, and calls it', async () => {
    const provider = new UnattendedOAuthProvider();
    const transport = new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), { authProvider: provider as never });
    const client = new Client({ name: 'oauth-agent', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(transport);
    const me = () => client.callTool({ name: 'account.me', arguments: {} });
    await expect(me()).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.authorizations[0].searchParams.get('scope')).toBe('user');
    await transport.finishAuth(provider.code!);
    expect(await me()).toMatchObject({ content: [{ type: 'text', text: '{"id":"johndoe","roles":["user"]}' }] });
    await client.close();
  });

  it('an agent without tasks follows the durable report\'s sse_url with its JWT; a forged one is the module\'s 401', async () => {
    const jwt = { authorization: `Bearer ${await as.token({ sub: 'ada', aud: `${t.url}/mcp`, scope: 'user' })}` };
    const request = mcpRequest('2026', 'r', 'tools/call', { name: 'report.generate', arguments: { steps: 2, delayMs: 10 } });
    request.headers = { ...request.headers, ...jwt };
    const handle = JSON.parse((await postMcp(`${t.url}/mcp`, request)).body.result.content[0].text);
    const attach = await fetch(t.url + handle.sse_url, { headers: jwt });
    expect(attach.status).toBe(200);
    const frames = await attach.text();
    expect(frames.match(/^event: .+$/gm)).toEqual(['event: progress', 'event: progress', 'event: chunk', 'event: done', 'event: end']);
    expect((await fetch(t.url + handle.sse_url)).status).toBe(404);
    const forged = await fetch(t.url + handle.sse_url, { headers: { authorization: 'Bearer not-a-jwt' } });
    expect([forged.status, forged.headers.get('www-authenticate'), await forged.json()]).toEqual([
      401,
      `Bearer error="invalid_token", error_description="The access token is malformed", resource_metadata="${t.url}/.well-known/oauth-protected-resource/mcp"`,
      { error: { code: -32001, message: 'Invalid access token: The access token is malformed' } },
    ]);
  });

  it('publishes its metadata, and the demo\'s own login tokens still work on /mcp', async () => {
    const metadata = await (await fetch(`${t.url}/.well-known/oauth-protected-resource/mcp`)).json();
    expect(metadata).toEqual({ resource: `${t.url}/mcp`, authorization_servers: [as.issuer], scopes_supported: ['user'], bearer_methods_supported: ['header'], resource_name: 'nest-jsonrpc demo' });
    const login = await t.rpc({ jsonrpc: '2.0', id: 1, method: 'auth.login', params: { username: 'bob', password: 'bob-pw' } });
    const client = new Client({ name: 'token-agent', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${login.body.result.token}` } } }));
    expect(await client.callTool({ name: 'account.me', arguments: {} })).toMatchObject({ content: [{ type: 'text', text: '{"id":"bob","roles":["user"]}' }] });
    await client.close();
  });
});
