/**
 * The demo's own document (as `npm start` serves it) validates under the
 * OpenRPC meta-schema, lists every demo method with a summary and tags, hides role-protected
 * methods and their schemas from callers without the roles — and its schemas are accurate: the
 * demo's real answers (results, and the rows of every stream) validate against them.
 */
import AjvModule from 'ajv';
import formatsModule from 'ajv-formats';
import { JsonRpcClient } from '@nest-jsonrpc/client';
import { JsonRpcServer } from '@nest-jsonrpc/server';
import { dereferenceOpenRpc, validateOpenRpc } from '../../libs/server/src/openrpc/openrpc-validation.spec-support.js';
import { startDemoApp, type DemoApp } from './support/demo-app.js';

// CommonJS packages: their classes sit on `.default` under NodeNext typing (as in the explorer page).
const Ajv = AjvModule.default;
const addFormats = formatsModule.default;

/**
 * Params of one real call per method (streams: enough rows to check, then stop). A new demo
 * method needs a summary, tags, a result (or row) schema and an entry here.
 */
const SAMPLES: Record<string, { params?: unknown; rows?: number }> = {
  'math.add': { params: { a: 2, b: 3 } },
  'math.subtract': { params: [42, 23] },
  'user.update': { params: { id: 7, email: 'ada@example.com', address: { city: 'London' } } },
  'orders.place': {
    params: { customer: { email: 'ada@example.com', name: 'Ada' }, lines: [{ sku: 'BOK-001', qty: 2 }], shipping: { method: 'delivery', address: { street: '1 Main St', city: 'London', zip: '12345' } } },
  },
  'orders.track': { params: { orderId: 'ord-1', delayMs: 0 } },
  'billing.withdraw': { params: { amount: 10 } },
  echo: { params: { message: 'hi' } },
  'legacy.echo': { params: { message: 'hi' } },
  'auth.login': { params: { username: 'bob', password: 'bob-pw' } },
  'account.me': {},
  'admin.stats': {},
  'demo.ping': {},
  'reports.monthly': { params: { month: '2024-01' } },
  'reports.refresh': {},
  'chat.stream': { params: { prompt: 'hello there', delayMs: 0 } },
  'logs.tail': { params: { intervalMs: 10 }, rows: 3 },
  'export.progress': { params: { steps: 3, stepMs: 0 } },
  'files.download': { params: { size: 100, chunkSize: 48 } },
  'report.generate': { params: { steps: 2, delayMs: 0 } },
  'agent.ask': { params: { question: 'What is the weather in Porto?', delayMs: 0 } },
  'weather.get': { params: { city: 'Porto' } },
};

describe('the demo\'s OpenRPC document', () => {
  let t: DemoApp;
  let document: any;
  let dereferenced: any;
  beforeAll(async () => {
    t = await startDemoApp();
    document = await (await fetch(`${t.url}/rpc/openrpc.json`, { headers: t.alice })).json();
    dereferenced = await dereferenceOpenRpc(document);
  });
  afterAll(() => t?.close());

  it('validates under the meta-schema and lists every demo method (all but rpc.discover), each with a summary and tags', () => {
    expect(validateOpenRpc(document)).toBe(true);
    const registered = [...t.app.get(JsonRpcServer).registry.all()].map((d) => d.name).filter((name) => name !== 'rpc.discover');
    expect(document.methods.map((m: { name: string }) => m.name).sort()).toEqual(registered.sort());
    expect(Object.keys(SAMPLES).sort()).toEqual(registered.sort());
    for (const method of document.methods) {
      expect([method.name, typeof method.summary, method.tags?.length > 0]).toEqual([method.name, 'string', true]);
      // Described: every result (or row) has a schema, never "anything".
      expect([method.name, JSON.stringify(method.result.schema)]).not.toEqual([method.name, '{}']);
    }
    expect(document.methods.find((m: { name: string }) => m.name === 'legacy.echo')).toMatchObject({ deprecated: true, description: 'Deprecated: use echo instead' });
    expect(document.methods.find((m: { name: string }) => m.name === 'report.generate')['x-stream']).toEqual({ format: 'ndjson', path: '/rpc', durable: true, streamsPath: '/rpc/streams' });
  });

  it('an anonymous caller sees neither the role-protected methods nor their result schemas', async () => {
    const text = await (await fetch(`${t.url}/rpc/openrpc.json`)).text();
    const anonymous = JSON.parse(text);
    expect(validateOpenRpc(anonymous)).toBe(true);
    // (admin.stats is named in agent.ask's own description, so it is checked as a method name.)
    for (const hidden of ['account.me', 'reports.monthly', 'reports.refresh', 'MeResult', 'StatsResult', 'MonthlyReportResult', 'uptimeSeconds', 'generatedAt']) {
      expect(text).not.toContain(hidden);
    }
    const names = anonymous.methods.map((m: { name: string }) => m.name);
    expect(names).toContain('math.add');
    expect(names).not.toContain('admin.stats');
  });

  it('every method\'s real answer validates against its result (or row) schema', async () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    const client = new JsonRpcClient({ url: `${t.url}/rpc`, headers: t.alice });
    const failures: string[] = [];
    const checked = new Set<string>();
    const check = (name: string, value: unknown, schema: object) => {
      checked.add(name.split(' ')[0]);
      const validate = ajv.compile(schema);
      if (!validate(value)) failures.push(`${name}: ${JSON.stringify(value)} ${ajv.errorsText(validate.errors)}`);
    };
    for (const method of dereferenced.methods) {
      const sample = SAMPLES[method.name];
      const stream = method['x-stream'];
      if (!stream) {
        check(method.name, await client.call(method.name, sample.params as never), method.result.schema);
      } else if (stream.durable) {
        const handle = await client.call<{ stream_id: string }>(method.name, sample.params as never);
        for await (const event of client.attach(handle.stream_id)) {
          if (event.event === 'chunk') check(`${method.name} row`, event.data, method.result.schema);
        }
      } else {
        const controller = new AbortController();
        let count = 0;
        try {
          for await (const row of client.stream(method.name, sample.params as never, { signal: controller.signal })) {
            check(`${method.name} row ${count}`, row, method.result.schema);
            if (++count === sample.rows) controller.abort();
          }
        } catch (error) {
          if (!controller.signal.aborted) throw error;
        }
        expect([method.name, count > 0]).toEqual([method.name, true]);
      }
    }
    expect(failures).toEqual([]);
    expect([...checked].sort()).toEqual(Object.keys(SAMPLES).sort());
    // The check itself bites: a row of the wrong shape is refused.
    const sum = dereferenced.methods.find((m: { name: string }) => m.name === 'math.add').result.schema;
    expect(ajv.compile(sum)({ sum: '5' })).toBe(false);
  }, 30_000);
});
