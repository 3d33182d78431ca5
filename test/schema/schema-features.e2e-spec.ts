/**
 * What a Standard Schema does to a call, with zod 4, Valibot 1 and ArkType 2 over `/rpc`: the
 * handler receives the schema's output (transforms, defaults), unions and optional vs nullable
 * follow the schema, an async refinement's issue is -32602 and its throw -32603 (logged, never
 * sent), `@RpcParam` schemas, `validateResults` for results and rows, and hostile params behave as
 * through a DTO.
 */
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';
import { LIBRARIES, LOOKUP_FAILS, ROWS_STOPPED, schemaAppModule, STYLES, type Library } from './support/schema-methods.js';

const SIGNUP = { username: '  Grace ', contact: { kind: 'email', email: 'g@h.example' }, referrer: null };

/** Anything that reads like a stack trace or an internal error text. */
const STACK = /\bat .+\.(ts|js):\d+|TypeError|RangeError|ReferenceError|node_modules/;

describe('Standard Schema params in a call', () => {
  let t: TestApp;
  const call = async (method: string, params: unknown) => (await t.rpc({ jsonrpc: '2.0', method, params, id: 1 })).body;

  beforeAll(async () => {
    t = await startTestApp(schemaAppModule());
  });
  afterAll(() => t.close());

  describe.each(LIBRARIES)('%s', (library: Library) => {
    const signup = (params: unknown) => call(`${library}.signup`, params);

    it('the handler receives the output: transforms applied, defaults filled in, an absent optional key left out', async () => {
      expect((await signup(SIGNUP)).result).toEqual({ username: 'grace', contact: { kind: 'email', email: 'g@h.example' }, referrer: null, tags: [] });
      expect((await signup({ ...SIGNUP, nickname: 'gh', referrer: 'ada', tags: ['x'] })).result).toEqual({
        username: 'grace',
        contact: { kind: 'email', email: 'g@h.example' },
        nickname: 'gh',
        referrer: 'ada',
        tags: ['x'],
      });
    });

    it('optional is not nullable, nullable is not optional', async () => {
      const nullNickname = await signup({ ...SIGNUP, nickname: null });
      expect(nullNickname.error.code).toBe(-32602);
      expect(nullNickname.error.data.map((e: { path: string }) => e.path)).toEqual(['nickname']);
      const { referrer: _absent, ...withoutReferrer } = SIGNUP;
      const missingReferrer = await signup(withoutReferrer);
      expect(missingReferrer.error.data.map((e: { path: string }) => e.path)).toEqual(['referrer']);
    });

    it('a union takes either branch, and refuses what matches none', async () => {
      expect((await signup({ ...SIGNUP, contact: { kind: 'phone', phone: '0123' } })).result.contact).toEqual({ kind: 'phone', phone: '0123' });
      const wrongBranch = await signup({ ...SIGNUP, contact: { kind: 'phone', phone: 'not digits' } });
      expect(wrongBranch.error.code).toBe(-32602);
      expect(wrongBranch.error.data.every((e: { path: string }) => e.path.startsWith('contact'))).toBe(true);
      const noBranch = await signup({ ...SIGNUP, contact: { kind: 'fax' } });
      expect(noBranch.error.code).toBe(-32602);
      expect(noBranch.error.data.every((e: { path: string }) => e.path.startsWith('contact'))).toBe(true);
    });

    it('unknown keys follow the schema: zod and Valibot objects drop them, ArkType keeps them by default; rejectUnknown does not apply', async () => {
      const { result } = await signup({ ...SIGNUP, extra: 1 });
      expect(result.username).toBe('grace');
      if (library === 'arktype') expect(result.extra).toBe(1);
      else expect(result).not.toHaveProperty('extra');
    });

    it("a refinement's issue is -32602 at its path, after the transform ran", async () => {
      const taken = await signup({ ...SIGNUP, username: ' ADA ' });
      expect(taken.error).toEqual({ code: -32602, message: 'Invalid params', data: [{ path: 'username', message: 'Username is taken', code: expect.any(String) }] });
    });

    it('a refinement that throws is -32603 with the fixed message; the cause is logged, never sent', async () => {
      const failed = await signup({ ...SIGNUP, username: LOOKUP_FAILS });
      expect(failed.error).toEqual({ code: -32603, message: 'Internal error' });
      expect(t.logger.text('error')).toContain('the user directory is down');
      // The server is still serving.
      expect((await signup(SIGNUP)).result.username).toBe('grace');
    });

    it('over MCP tools/call too: the refinement issue listed, the throw a fixed -32603', async () => {
      const tool = async (args: unknown) =>
        (await (await fetch(`${t.url}/mcp/call`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: `${library}.signup`, arguments: args }) })).json());
      expect((await tool({ ...SIGNUP, username: 'ada' })).content[0].text).toBe('Error -32602: Invalid params\n  - username: Username is taken');
      expect((await tool({ ...SIGNUP, username: LOOKUP_FAILS })).content[0].text).toBe('Error -32603: Internal error');
      expect((await tool(SIGNUP)).content[0].text).toContain('"username":"grace"');
    });

    it('@RpcParam(name, { schema }): each value validated under its name, by name or by position', async () => {
      expect((await call(`${library}.greet`, { name: '  Ada ', times: 2 })).result).toBe('Ada Ada');
      expect((await call(`${library}.greet`, ['Ada'])).result).toBe('Ada');
      const bad = await call(`${library}.greet`, { name: '   ', times: 0 });
      expect(bad.error.code).toBe(-32602);
      expect(bad.error.data.map((e: { path: string }) => e.path).sort()).toEqual(['name', 'times']);
      // rejectUnknown applies to the params object a list of @RpcParam makes.
      expect((await call(`${library}.greet`, { name: 'Ada', shout: true })).error.data).toEqual([{ path: 'shout', message: 'Unknown parameter', code: null }]);
    });

    it('results and rows are sent as returned while validateResults is off', async () => {
      expect((await call(`${library}.result.bad`, {})).result).toEqual({ email: 'a@b.example', priority: 'high', lines: 1, units: 1, note: null });
      const res = await t.post({ jsonrpc: '2.0', method: `${library}.rows.bad`, id: 1 }, { path: '/rpc/stream' });
      expect((await res.text()).trim().split('\n').map((l) => JSON.parse(l))).toEqual([{ sku: 'first', qty: 1 }, { sku: 'second', qty: 0 }, { sku: 'never', qty: 1 }]);
    });
  });

  describe.each(STYLES)('hostile params through %s', (style) => {
    const method = `${style}.order.create`;
    const lines = [{ sku: 'x', qty: 1 }];

    it('20,000 levels of nesting: -32602, no crash, no stack', async () => {
      const deep = '['.repeat(20_000) + ']'.repeat(20_000);
      const res = await t.post(`{"jsonrpc":"2.0","method":"${method}","params":{"email":"a@b.example","lines":[{"sku":"x","qty":1}],"note":${deep}},"id":1}`);
      const text = await res.text();
      expect(text).not.toMatch(STACK);
      const body = JSON.parse(text);
      expect(body.error.code).toBe(-32602);
      // A schema refuses the array where a string goes; class-transformer recurses into it first.
      expect(body.error.data).toEqual(style === 'dto' ? [{ path: null, message: 'Params are nested too deeply', code: 'maxDepth' }] : [expect.objectContaining({ path: 'note' })]);
    });

    it('20,000 levels of nesting inside a recursive schema: -32602 maxDepth, no crash', async () => {
      if (style === 'dto') return;
      const deep = '{"child":'.repeat(20_000) + '{}' + '}'.repeat(20_000);
      const res = await t.post(`{"jsonrpc":"2.0","method":"${style}.tree.depth","params":{"tree":${deep}},"id":1}`);
      const text = await res.text();
      expect(text).not.toMatch(STACK);
      expect(JSON.parse(text).error).toEqual({ code: -32602, message: 'Invalid params', data: [{ path: '', message: 'Params are nested too deeply', code: 'maxDepth' }] });
      expect((await call(`${style}.tree.depth`, { tree: { child: { child: {} } } })).result).toBe(3);
    });

    it('a huge string: the same answer as a small one, an error message of bounded size', async () => {
      const huge = 'x'.repeat(900_000);
      expect((await call(method, { email: 'a@b.example', lines, note: huge })).result.note).toHaveLength(900_000);
      const res = await t.post({ jsonrpc: '2.0', method, params: { email: huge, lines }, id: 1 });
      const text = await res.text();
      expect(text.length).toBeLessThan(2_000);
      expect(JSON.parse(text).error.data.map((e: { path: string }) => e.path)).toEqual(['email']);
    });

    it('__proto__ keys: dropped by the body parser before any schema, as for a DTO; nothing polluted', async () => {
      const res = await t.post(`{"jsonrpc":"2.0","method":"${method}","params":{"email":"a@b.example","lines":[{"sku":"x","qty":1,"__proto__":{"qty":5}}],"__proto__":{"priority":9}},"id":1}`);
      const text = await res.text();
      expect(JSON.parse(text).result).toEqual({ email: 'a@b.example', priority: 3, lines: 1, units: 1, note: null });
      expect(({} as Record<string, unknown>).priority).toBeUndefined();
    });

    it('lone surrogates pass through as the strings they are', async () => {
      const res = await t.post(`{"jsonrpc":"2.0","method":"${method}","params":{"email":"a@b.example","lines":[{"sku":"x","qty":1}],"note":"\\ud800 and \\udfff"},"id":1}`);
      const text = await res.text();
      expect(text).toContain('"note":"\\ud800 and \\udfff"');
      expect(JSON.parse(text).result.note).toBe('\ud800 and \udfff');
    });
  });
});

describe('validateResults: true', () => {
  let t: TestApp;
  const call = async (method: string, params: unknown) => (await t.rpc({ jsonrpc: '2.0', method, params, id: 1 })).body;

  beforeAll(async () => {
    t = await startTestApp(schemaAppModule({ validateResults: true }));
  });
  afterAll(() => t.close());

  describe.each(LIBRARIES)('%s', (library: Library) => {
    it('a result that fails its schema is -32603, logged with its issues, never sent', async () => {
      expect((await call(`${library}.result.bad`, {})).error).toEqual({ code: -32603, message: 'Internal error' });
      expect(t.logger.text('error')).toMatch(new RegExp(`the result of "${library}\\.result\\.bad" does not match its schema: priority: `));
    });

    it("a result that passes is sent as the schema's output", async () => {
      const { result } = await call(`${library}.result.bad`, { extra: true });
      expect(result).toEqual({ email: 'a@b.example', priority: 1, lines: 1, units: 2, note: null });
    });

    it('rows are checked as they stream: a failing row ends the stream with a -32603 error row, the producer stopped', async () => {
      ROWS_STOPPED.delete(library);
      const res = await t.post({ jsonrpc: '2.0', method: `${library}.rows.bad`, id: 1 }, { path: '/rpc/stream' });
      const rows = (await res.text()).trim().split('\n').map((l) => JSON.parse(l));
      expect(rows).toEqual([{ sku: 'first', qty: 1 }, { error: { code: -32603, message: 'Internal error' } }]);
      expect(t.logger.text('error')).toMatch(new RegExp(`the row of "${library}\\.rows\\.bad" does not match its schema: qty: `));
      expect(ROWS_STOPPED.has(library)).toBe(true);
    });

    it('a durable stream: the failing row ends it with an error event (-32603), the good row kept', async () => {
      const { result } = await call(`${library}.rows.bad.durable`, {});
      const text = await (await fetch(t.url + result.sse_url, { headers: { accept: 'text/event-stream' } })).text();
      const events = text.split('\n\n').filter((block) => block.includes('event: ')).map((block) => ({
        event: /event: (\w+)/.exec(block)![1],
        data: JSON.parse(/data: (.*)/.exec(block)![1]),
      }));
      expect(events).toEqual([
        { event: 'chunk', data: { sku: 'first', qty: 1 } },
        { event: 'error', data: { error: { code: -32603, message: 'Internal error' } } },
        { event: 'end', data: {} },
      ]);
    });

    it('valid params and results are untouched by the option', async () => {
      expect((await call(`${library}.order.create`, { email: 'a@b.example', lines: [{ sku: 'x', qty: 2 }] })).result).toEqual({ email: 'a@b.example', priority: 3, lines: 1, units: 2, note: null });
    });
  });
});
