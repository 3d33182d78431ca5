/**
 * One description from the schema: the order method written with a DTO, zod, Valibot and ArkType
 * is described alike (up to what each library expresses) in the OpenRPC document, the explorer's
 * client-side checks, MCP `tools/list` (inputSchema, outputSchema) and `RpcToolset` parameters;
 * and a schema that cannot be described, or two sources of one method's params, stop startup
 * with the method's name.
 */
import { Injectable, Module } from '@nestjs/common';
import * as v from 'valibot';
import { z } from 'zod';
import { IsInt } from 'class-validator';
import { JsonRpcModule, RpcMethod, RpcParam, RpcParams, RpcStream } from '@nest-jsonrpc/server';
import { generateClient } from '@nest-jsonrpc/codegen';
import { paramsValidator } from '../../libs/server/explorer/src/params-validator.js';
import type { ExplorerDocument, ExplorerMethod } from '../../libs/server/explorer/src/openrpc-view.js';
import { validateOpenRpc } from '../../libs/server/src/openrpc/openrpc-validation.spec-support.js';
import { startupError } from '../security/security-apps.js';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';
import { schemaAppModule, STYLES, type Style } from './support/schema-methods.js';

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

interface Described {
  properties: string[];
  required: string[];
}

/** The property names and required ones of an object schema, sorted. */
function shapeOf(schema: { properties?: Record<string, unknown>; required?: string[] }): Described {
  return { properties: Object.keys(schema.properties ?? {}).sort(), required: [...(schema.required ?? [])].sort() };
}

const ORDER: Described = { properties: ['email', 'lines', 'note', 'priority'], required: ['email', 'lines'] };
/** A DTO cannot say "required but nullable" (`@IsOptional` admits both): `note` is left out of the comparison. */
const SUMMARY: Described = { properties: ['email', 'lines', 'note', 'priority', 'units'], required: ['email', 'lines', 'priority', 'units'] };
const summaryShape = (schema: object) => {
  const { properties, required } = shapeOf(schema);
  return { properties, required: required.filter((name) => name !== 'note') };
};

describe('descriptions of the same method in four styles', () => {
  let t: TestApp;
  let document: any;
  let tools: any[];
  /** `schema`, or the component its `$ref` names (one level: recursive components stay references). */
  const deref = (schema: any): any => {
    const ref = schema?.$ref;
    return typeof ref === 'string' ? document.components.schemas[ref.replace('#/components/schemas/', '')] : schema;
  };

  beforeAll(async () => {
    t = await startTestApp(schemaAppModule());
    document = await (await fetch(`${t.url}/rpc/openrpc.json`)).json();
    const res = await fetch(`${t.url}/mcp`, { method: 'POST', headers: MCP_HEADERS, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
    const text = await res.text();
    const message = res.headers.get('content-type')?.startsWith('text/event-stream') ? JSON.parse(text.split('\n').find((l) => l.startsWith('data: '))!.slice(6)) : JSON.parse(text);
    tools = message.result.tools;
  });
  afterAll(() => t.close());

  const methodOf = (doc: any, name: string) => doc.methods.find((m: { name: string }) => m.name === name);

  it('the document holding all of them is valid OpenRPC, and every reference resolves', () => {
    expect(validateOpenRpc(document)).toBe(true);
    for (const [, name] of JSON.stringify(document).matchAll(/"#\/components\/schemas\/([^"]+)"/g)) expect(document.components.schemas).toHaveProperty([name]);
    expect(JSON.stringify(document)).not.toContain('$defs');
    expect(JSON.stringify(document)).not.toContain('"$schema"');
  });

  describe.each(STYLES)('%s', (style: Style) => {
    it('OpenRPC: one content descriptor per property, required from the schema, the array items described, -32602 implied', () => {
      const method = methodOf(document, `${style}.order.create`);
      expect(method.paramStructure).toBe('by-name');
      const params = Object.fromEntries(method.params.map((p: { name: string; required: boolean; schema: unknown }) => [p.name, p]));
      expect(Object.keys(params).sort()).toEqual(ORDER.properties);
      expect(Object.keys(params).filter((name) => params[name].required).sort()).toEqual(ORDER.required);
      expect(params.lines.schema).toMatchObject({ type: 'array', minItems: 1 });
      const line = deref(params.lines.schema.items);
      expect(shapeOf(line)).toEqual({ properties: ['qty', 'sku'], required: ['qty', 'sku'] });
      expect(line.properties.qty).toMatchObject({ type: 'integer', minimum: 1 });
      // A DTO's @IsOptional admits null as well: its type is ['integer', 'null'].
      expect([params.priority.schema.type].flat()).toContain('integer');
      expect(params.priority.schema).toMatchObject({ minimum: 0, maximum: 10 });
      expect(method.errors.map((e: { code: number }) => e.code)).toContain(-32602);
    });

    it('OpenRPC: the result from the output side (a DTO result class alike)', () => {
      expect(summaryShape(deref(methodOf(document, `${style}.order.create`).result.schema))).toEqual(SUMMARY);
    });

    it('OpenRPC: a stream row from the row schema, under x-stream', () => {
      const method = methodOf(document, `${style}.order.lines`);
      expect(method['x-stream']).toBeDefined();
      expect(shapeOf(deref(method.result.schema))).toEqual({ properties: ['qty', 'sku'], required: ['qty', 'sku'] });
    });

    it("the explorer's client-side check refuses invalid params at the same paths", () => {
      const validate = paramsValidator(methodOf(document, `${style}.order.create`) as ExplorerMethod, document as ExplorerDocument);
      expect(validate({ email: 'a@b.example', lines: [{ sku: 'x', qty: 2 }] })).toEqual([]);
      const errors = validate({ email: 'a@b.example', priority: 11, lines: [{ sku: 'x', qty: 1 }, { sku: 3, qty: 0 }] });
      expect([...new Set(errors.map((e) => e.path))].sort()).toEqual(['lines.1.qty', 'lines.1.sku', 'priority']);
    });

    it('MCP tools/list: the same inputSchema and outputSchema shapes, standalone', () => {
      const tool = tools.find((x) => x.name === `${style}.order.create`);
      expect(tool.description).toBe('Places an order.');
      expect(tool.inputSchema.type).toBe('object');
      expect(shapeOf(tool.inputSchema)).toEqual(ORDER);
      expect(summaryShape(tool.outputSchema)).toEqual(SUMMARY);
      expect(JSON.stringify([tool.inputSchema, tool.outputSchema])).not.toContain('#/components/');
    });

    it("the typed client generator: params from the schema's input side, the result from its output side", async () => {
      const code = await generateClient(document);
      const pascal = style[0].toUpperCase() + style.slice(1);
      const block = (name: string) => {
        const start = code.indexOf(`export interface ${pascal}OrderCreate${name} {`);
        expect(start).toBeGreaterThanOrEqual(0);
        return code.slice(start, code.indexOf('\n}', start));
      };
      // The default makes priority optional to send and present in what comes back.
      expect(block('Params')).toMatch(/\n {2}priority\?: number( \| null)?;/);
      expect(block('Params')).toMatch(/\n {2}email: string;/);
      if (style !== 'dto') expect(block('Result')).toMatch(/\n {2}priority: number;/);
    });

    it('RpcToolset: the same parameters', async () => {
      const { result } = (await t.rpc({ jsonrpc: '2.0', method: 'tool.describe', params: { method: `${style}.order.create` }, id: 1 })).body;
      expect(result.type).toBe('object');
      expect(shapeOf(result)).toEqual(ORDER);
    });
  });

  it('@RpcParam schemas are described one by one, positional order kept', () => {
    for (const library of ['zod', 'valibot', 'arktype']) {
      const method = methodOf(document, `${library}.greet`);
      expect(method.paramStructure).toBe('either');
      expect(method.params.map((p: { name: string }) => p.name)).toEqual(['name', 'times']);
      expect(method.params[0]).toMatchObject({ required: true, schema: { type: 'string' } });
      expect(method.params[1]).toMatchObject({ required: false, schema: { type: 'integer' } });
    }
  });

  it('a schema the converter refuses is described by the jsonSchema given beside it (Valibot signup)', () => {
    const method = methodOf(document, 'valibot.signup');
    const params = Object.fromEntries(method.params.map((p: { name: string; required: boolean }) => [p.name, p.required]));
    expect(params).toEqual({ username: true, contact: true, nickname: false, referrer: true, tags: false });
  });
});

describe('startup refuses what cannot be described or has two param sources, naming the method', () => {
  class PairDto {
    @IsInt() a!: number;
  }

  const moduleWith = (methods: new () => unknown) => {
    @Module({ imports: [JsonRpcModule.forRoot({ stream: { enabled: true } })], providers: [methods] })
    class AppModule {}
    return AppModule;
  };

  it('a DTO parameter and a params schema', async () => {
    @Injectable()
    class Methods {
      @RpcMethod('two.sources', { params: z.object({ a: z.number() }) })
      both(p: PairDto) {
        return p;
      }
    }
    expect((await startupError(moduleWith(Methods))).message).toContain(
      'Methods.both ("two.sources"): argument 0 is a DTO (PairDto) and the method has a params schema: params take one source, the DTO or the schema',
    );
  });

  it('a schema without a JSON Schema converter (plain Valibot), and a zod transform on the output side', async () => {
    @Injectable()
    class Methods {
      @RpcMethod('plain.valibot')
      plain(@RpcParams({ schema: v.object({ a: v.number() }) }) p: unknown) {
        return p;
      }

      @RpcMethod('zod.transform.result', { result: z.object({ n: z.string().transform((s) => s.length) }) })
      transformed() {
        return { n: 1 };
      }

      @RpcMethod('zod.transform.row')
      @RpcStream({ row: z.string().transform((s) => s.length) })
      *rows() {
        yield 1;
      }
    }
    const message = (await startupError(moduleWith(Methods))).message;
    expect(message).toContain('Methods.plain ("plain.valibot"): params: the valibot schema has no JSON Schema converter (~standard.jsonSchema)');
    expect(message).toContain('toStandardJsonSchema() of @valibot/to-json-schema; or describe it with @RpcMethod(name, { jsonSchema: { params } }) or @RpcParams({ jsonSchema })');
    expect(message).toContain('Methods.transformed ("zod.transform.result"): result: the zod schema cannot describe its output as JSON Schema (Transforms cannot be represented in JSON Schema); or describe it with @RpcMethod(name, { jsonSchema: { result } })');
    expect(message).toContain('Methods.rows ("zod.transform.row"): row: ');
  });

  it('the same schemas start once a JSON Schema describes them', async () => {
    @Injectable()
    class Methods {
      @RpcMethod('plain.valibot')
      plain(@RpcParams({ schema: v.object({ a: v.number() }), jsonSchema: { type: 'object', properties: { a: { type: 'number' } }, required: ['a'] } }) p: unknown) {
        return p;
      }

      @RpcMethod('zod.transform.result', { result: z.object({ n: z.string().transform((s) => s.length) }), jsonSchema: { result: { type: 'object', properties: { n: { type: 'integer' } } } } })
      transformed() {
        return { n: 1 };
      }
    }
    const t = await startTestApp(moduleWith(Methods));
    try {
      expect((await t.rpc({ jsonrpc: '2.0', method: 'plain.valibot', params: { a: 'x' }, id: 1 })).body.error.data).toEqual([
        { path: 'a', message: 'Invalid type: Expected number but received "x"', code: 'number' },
      ]);
      expect((await t.rpc({ jsonrpc: '2.0', method: 'plain.valibot', params: { a: 1 }, id: 1 })).body.result).toEqual({ a: 1 });
    } finally {
      await t.close();
    }
  });

  it('options that are not what they say: a jsonSchema with no schema, a schema that is not a Standard Schema', async () => {
    @Injectable()
    class Methods {
      @RpcMethod('a', { jsonSchema: { result: { type: 'string' } } })
      a() {
        return 'x';
      }

      @RpcMethod('b')
      b(@RpcParam('x', { schema: { type: 'string' } as never }) x: string) {
        return x;
      }

      @RpcMethod('c', { params: 'not a schema' as never })
      c() {
        return 'c';
      }
    }
    const message = (await startupError(moduleWith(Methods))).message;
    expect(message).toContain('Methods.a ("a"): option "jsonSchema.result" describes a Standard Schema "result", and there is none: give the JSON Schema as "result" itself');
    expect(message).toContain('Methods.b ("b"): @RpcParam("x", { schema }) must be a Standard Schema (zod, Valibot, ArkType, …)');
    expect(message).toContain('Methods.c ("c"): option "params" must be a Standard Schema (zod, Valibot, ArkType, …) or a JSON Schema (an object or a boolean)');
  });
});
