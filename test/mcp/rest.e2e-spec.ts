/**
 * The REST surface (`mcp.rest: true`): GET /mcp/tools and POST /mcp/call with
 * their checks in order, its messages and statuses, exact bodies, and the format chosen
 * by X-Mcp-Format, then ?format=, then @RpcMcp({ format }), then mcp.defaultFormat.
 */
import type { TestApp } from '../support/rpc-test-app.js';
import { startMcpApp, Tools } from './support/mcp-test-app.js';

const reader = { 'x-user': 'rita', 'x-roles': 'reader' };

describe('MCP REST surface', () => {
  let t: TestApp;
  const post = async (body: string | undefined, init: { headers?: Record<string, string>; query?: string } = {}) => {
    const res = await fetch(`${t.url}/mcp/call${init.query ?? ''}`, { method: 'POST', headers: { 'content-type': 'application/json', ...init.headers }, body });
    return { status: res.status, body: await res.json() };
  };
  const refused = (text: string) => ({ content: [{ type: 'text', text }], isError: true });

  beforeAll(async () => {
    t = await startMcpApp({ mcp: { rest: true, defaultFormat: 'pretty_json' } });
  });
  afterAll(() => t.close());

  it('GET /mcp/tools answers exactly {tools}, filtered by the caller roles', async () => {
    const anonymous = await (await fetch(`${t.url}/mcp/tools`)).json();
    expect(Object.keys(anonymous)).toEqual(['tools']);
    expect(anonymous.tools.map((tool: { name: string }) => tool.name)).not.toContain('report.daily');
    const withRole = await (await fetch(`${t.url}/mcp/tools`, { headers: reader })).json();
    expect(withRole.tools.map((tool: { name: string }) => tool.name)).toContain('report.daily');
  });

  it('POST /mcp/call answers {content, structuredContent?} for a success', async () => {
    expect(await post(JSON.stringify({ name: 'math.add', arguments: { a: 1, b: 2 } }))).toEqual({
      status: 200,
      body: { content: [{ type: 'text', text: '{\n  "sum": 3\n}' }], structuredContent: { sum: 3 } },
    });
    expect(await post(JSON.stringify({ name: 'echo', arguments: { text: 'hi' } }))).toEqual({ status: 200, body: { content: [{ type: 'text', text: 'hi' }] } });
  });

  it.each([
    ['an empty body', '', 400, 'Error -32600: Request body is empty'],
    ['bad JSON', '{"name":', 400, 'Error -32700: Parse error'],
    ['not an object', '[1]', 400, 'Error -32600: Request must be a JSON object'],
    ['no name', '{"arguments":{}}', 400, 'Error -32600: Field "name" is required'],
    ['an empty name', '{"name":""}', 400, 'Error -32600: Field "name" must be a non-empty string'],
    ['a non-string name', '{"name":5}', 400, 'Error -32600: Field "name" must be a non-empty string'],
    ['bad arguments', '{"name":"echo","arguments":"x"}', 400, 'Error -32600: "arguments" must be an object or an array'],
    ['an unknown tool', '{"name":"nope"}', 404, 'Error -32601: Method not found: nope'],
    ['a method that is not a tool', '{"name":"internal.only"}', 404, 'Error -32601: Method not found: internal.only'],
    ['a tool whose roles the caller lacks', '{"name":"report.daily"}', 404, 'Error -32601: Method not found: report.daily'],
  ])('refuses %s with the bundle status and message', async (_label, body, status, text) => {
    expect(await post(body)).toEqual({ status, body: refused(text) });
  });

  it('carries X-Request-Id on its answers and refusals, like every route of the module', async () => {
    const headers = { 'x-request-id': 'rest-7' };
    const tools = await fetch(`${t.url}/mcp/tools`, { headers });
    const call = await fetch(`${t.url}/mcp/call`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: '{"name":"echo","arguments":{"text":"x"}}' });
    const refusal = await fetch(`${t.url}/mcp/call`, { method: 'POST', headers: { ...headers, 'content-type': 'text/plain' }, body: 'x' });
    expect([tools.status, call.status, refusal.status]).toEqual([200, 200, 415]);
    for (const res of [tools, call, refusal]) expect(res.headers.get('x-request-id')).toBe('rest-7');
    expect(await refusal.json()).toEqual(refused('Error -32600: Content-Type must be application/json'));
  });

  it('answers handler errors with 200 and isError, violations listed', async () => {
    const { status, body } = await post(JSON.stringify({ name: 'math.add', arguments: { a: 1 } }));
    expect(status).toBe(200);
    expect(body).toEqual(refused('Error -32602: Invalid params\n  - b: b must be a number conforming to the specified constraints'));
  });

  it('answers 413 for a body over maxRequestSize', async () => {
    const { status, body } = await post(JSON.stringify({ name: 'echo', arguments: { text: 'x'.repeat(1_100_000) } }));
    expect(status).toBe(413);
    expect(body.isError).toBe(true);
    expect(body.content[0].text).toMatch(/^Error -32600: /);
  });

  it('chooses the format: header, then ?format=, then the decorator, then mcp.defaultFormat', async () => {
    const call = JSON.stringify({ name: 'math.add', arguments: { a: 1, b: 2 } });
    expect((await post(call, { headers: { 'x-mcp-format': 'json' }, query: '?format=plain' })).body.content[0].text).toBe('{"sum":3}');
    expect((await post(call, { query: '?format=toon' })).body.content[0].text).toBe('sum: 3');
    expect((await post(JSON.stringify({ name: 'echo', arguments: { text: 'hi' } }))).body.content[0].text).toBe('hi');
    expect((await post(call)).body.content[0].text).toBe('{\n  "sum": 3\n}');
  });

  it('refuses an unknown format with 400 listing the allowed ones, without running the tool', async () => {
    const tools = t.app.get(Tools);
    const before = tools.runs.report;
    const { status, body } = await post(JSON.stringify({ name: 'report.daily' }), { headers: { ...reader, 'x-mcp-format': 'xml' } });
    expect(status).toBe(400);
    expect(body).toEqual(refused('Error -32600: Unknown format "xml"; allowed formats: json, pretty_json, markdown, plain, toon'));
    expect(tools.runs.report).toBe(before);
  });
});
