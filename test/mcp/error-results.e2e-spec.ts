/**
 * Error results every client can read. Real clients list the tools first and then validate a
 * call's `structuredContent` against the tool's `outputSchema` — SDK 1.x throws "Structured
 * content does not match the tool's output schema" and the MCP Inspector CLI prints that instead
 * of the error. So an error result never carries `structuredContent`; its text keeps
 * `Error <code>: <message>` and the violation lines, and the error object rides in `_meta`.
 * Each client here lists first, then calls tools with and without an output schema, valid and
 * invalid.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { TestApp } from '../support/rpc-test-app.js';
import { prepareInspector, type Inspector } from './support/inspector.js';
import { startMcpApp } from './support/mcp-test-app.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');

const ADD_VIOLATIONS = [
  '  - a: a must be a number conforming to the specified constraints',
  '  - b: b must be a number conforming to the specified constraints',
];

/** What every client must read, tool by tool (the first line exact, violation lines in any order). */
const CASES = [
  { tool: 'math.add', args: { a: 2, b: 3 }, text: '{"sum":5}', structured: { sum: 5 } },
  { tool: 'math.add', args: { a: 'x' }, error: { code: -32602, lines: ['Error -32602: Invalid params', ...ADD_VIOLATIONS] } },
  { tool: 'math.divide', args: { a: 1, b: 0 }, error: { code: 4001, lines: ['Error 4001: Division by zero'] } },
  { tool: 'echo', args: { text: 'hi' }, text: 'hi' },
  { tool: 'echo', args: { text: 7 }, error: { code: -32602, lines: ['Error -32602: Invalid params', '  - text: text must be a string'] } },
  { tool: 'boom', args: {}, error: { code: -32603, lines: ['Error -32603: Internal error'] } },
] as const;

type Case = (typeof CASES)[number];

function expectRead(result: any, c: Case): void {
  if ('error' in c) {
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    const [first, ...rest] = result.content[0].text.split('\n');
    expect([first, ...rest.sort()]).toEqual(c.error.lines);
    expect(result._meta['nest-jsonrpc/error']).toMatchObject({ code: c.error.code });
  } else {
    expect(result.isError).toBeFalsy();
    expect(result.content).toEqual([{ type: 'text', text: c.text }]);
    if ('structured' in c) expect(result.structuredContent).toEqual(c.structured);
  }
}

describe('error results every client reads (tools listed first)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startMcpApp();
  });
  afterAll(() => t.close());

  it('SDK 1.x: lists, then reads every result (it validates structuredContent against outputSchema)', async () => {
    const client = new ClientV1({ name: 'v1', version: '1.0.0' });
    await client.connect(new TransportV1(new URL(`${t.url}/mcp`)));
    const { tools } = await client.listTools();
    expect(tools.find((tool) => tool.name === 'math.divide')?.outputSchema).toMatchObject({ type: 'object', properties: { quotient: { type: 'number' } } });
    for (const c of CASES) expectRead(await client.callTool({ name: c.tool, arguments: c.args as any }), c);
    await client.close();
  });

  it.each(['2026-07-28', '2025'])('SDK 2.x (%s era): lists, then reads every result', async (era) => {
    const client = new ClientV2({ name: 'v2', version: '2.0.0' }, era === '2026-07-28' ? { versionNegotiation: { mode: 'auto' } } : {});
    await client.connect(new TransportV2(new URL(`${t.url}/mcp`)));
    await client.listTools();
    for (const c of CASES) expectRead(await client.callTool({ name: c.tool, arguments: c.args as any }), c);
    await client.close();
  });

  describe('the MCP Inspector CLI', () => {
    let inspector: Inspector;
    beforeAll(async () => {
      inspector = await prepareInspector(root);
    }, 300_000);

    /** `--tool-arg key=value` pairs; the Inspector turns numeric text into numbers, as a user's typing would be. */
    const toolArgs = (args: Record<string, unknown>) => Object.entries(args).flatMap(([k, v]) => ['--tool-arg', `${k}=${v}`]);

    it('lists the tools with their output schemas', async () => {
      const run = await inspector.cli([`${t.url}/mcp`, '--method', 'tools/list']);
      expect(run.code).toBe(0);
      const { tools } = JSON.parse(run.stdout);
      expect(tools.find((tool: any) => tool.name === 'math.add').outputSchema).toMatchObject({ type: 'object', properties: { sum: { type: 'number' } } });
    }, 90_000);

    it.each(CASES.map((c) => [`${c.tool} ${JSON.stringify(c.args)}`, c] as const))('calls %s and prints what the tool answered', async (_label, c) => {
      const run = await inspector.cli([`${t.url}/mcp`, '--method', 'tools/call', '--tool-name', c.tool, ...toolArgs(c.args)]);
      // The Inspector exits 5 for a result with isError (its "tool_is_error"), 0 for a success, and
      // 1 when it could not read the result at all (the schema mismatch this guards against).
      expect(run.code).toBe('error' in c ? 5 : 0);
      expectRead(JSON.parse(run.stdout), c);
      if ('error' in c) expect(JSON.parse(run.stderr)).toEqual({ error: { code: 'tool_is_error', message: `Tool '${c.tool}' returned isError:true.` } });
    }, 90_000);
  });
});
