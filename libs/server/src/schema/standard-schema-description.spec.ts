import 'reflect-metadata';
import { toStandardJsonSchema } from '@valibot/to-json-schema';
import { scope, type } from 'arktype';
import * as v from 'valibot';
import { z } from 'zod';
import type { StandardSchemaV1 } from '../decorators/standard-schema.js';
import { MethodSchemaBuilder, standaloneSchema } from './index.js';

const Address = z.object({ city: z.string().min(1) }).meta({ id: 'Address' });
const zodOrder = z.object({
  email: z.email(),
  priority: z.number().int().max(10).default(3),
  lines: z.array(z.object({ sku: z.string(), qty: z.number().int().min(1) })).min(1),
  ship: Address,
  bill: Address.optional(),
});

const build = () => new MethodSchemaBuilder();

describe('Standard Schemas described through Standard JSON Schema', () => {
  it('zod params: one descriptor per property from the input side, required from the schema, named schemas as shared components', () => {
    const b = build();
    const s = b.describe('order.create', { params: { kind: 'standard', schema: zodOrder } });
    expect(s.params.structure).toBe('by-name');
    expect(s.params.described).toBe(true);
    expect(s.params.descriptors.map((d) => [d.name, d.required])).toEqual([
      ['email', true],
      ['priority', false],
      ['lines', true],
      ['ship', true],
      ['bill', false],
    ]);
    expect(s.params.descriptors[0].schema).toMatchObject({ type: 'string', format: 'email' });
    expect(s.params.descriptors[1].schema).toMatchObject({ type: 'integer', default: 3, maximum: 10 });
    expect(s.params.descriptors[3].schema).toEqual({ $ref: '#/components/schemas/Address' });
    expect(s.params.schema).not.toHaveProperty('$schema');
    expect(s.params.schema).not.toHaveProperty('$defs');
    expect(b.components()).toEqual({ Address: { type: 'object', properties: { city: { type: 'string', minLength: 1 } }, required: ['city'] } });
  });

  it('the same named schema in two methods is one component; the same name with other content gets Name_output, then Name_2', () => {
    const b = build();
    b.describe('a', { params: { kind: 'standard', schema: z.object({ to: Address }) } });
    b.describe('b', { params: { kind: 'standard', schema: z.object({ from: Address }) }, result: z.object({ at: Address }) });
    const Other = z.object({ street: z.string() }).meta({ id: 'Address' });
    const c = b.describe('c', { params: { kind: 'standard', schema: z.object({ x: Other }) } });
    // zod closes an object on its output side: the result's Address is another schema.
    expect(b.components().Address_output).toMatchObject({ additionalProperties: false });
    expect(Object.keys(b.components()).sort()).toEqual(['Address', 'Address_2', 'Address_output']);
    expect(c.params.descriptors[0].schema).toEqual({ $ref: '#/components/schemas/Address_2' });
  });

  it('results and rows are described by the output side (a transform on the input side is fine)', () => {
    const b = build();
    const s = b.describe('m', {
      params: { kind: 'standard', schema: z.object({ n: z.string().transform((x) => x.length) }) },
      result: z.object({ total: z.number(), note: z.string().optional() }),
      row: z.object({ delta: z.string() }),
    });
    expect(s.params.descriptors[0].schema).toEqual({ type: 'string' });
    expect(s.result).toEqual({ type: 'object', properties: { total: { type: 'number' }, note: { type: 'string' } }, required: ['total'], additionalProperties: false });
    expect(s.row).toEqual({ type: 'object', properties: { delta: { type: 'string' } }, required: ['delta'], additionalProperties: false });
    expect(b.failures()).toEqual([]);
  });

  it('a recursive zod schema: the root a definition refers back to ("#") becomes a component named after the method', () => {
    const Tree: z.ZodType<{ value: number; children: unknown[] }> = z.object({ value: z.number(), get children() { return z.array(Tree); } });
    const b = build();
    const s = b.describe('tree.sum', { params: { kind: 'standard', schema: Tree }, result: z.object({ tree: Tree }) });
    expect(s.params.descriptors.map((d) => d.name)).toEqual(['value', 'children']);
    expect(s.params.descriptors[1].schema).toEqual({ type: 'array', items: { $ref: '#/components/schemas/tree_sum_params' } });
    const components = b.components();
    expect(components.tree_sum_params).toEqual({
      type: 'object',
      properties: { value: { type: 'number' }, children: { type: 'array', items: { $ref: '#/components/schemas/tree_sum_params' } } },
      required: ['value', 'children'],
    });
    // A standalone schema of it (what MCP and tools get) resolves every reference.
    const standalone = JSON.stringify(standaloneSchema(s.params.schema, components));
    expect(standalone).toContain('"$ref":"#/$defs/tree_sum_params"');
    expect(standalone).not.toContain('components');
  });

  it('Valibot through toStandardJsonSchema(), its lazy definitions as components', () => {
    const Line = v.object({ sku: v.string(), qty: v.pipe(v.number(), v.integer(), v.minValue(1)) });
    const Node: v.GenericSchema = v.object({ label: v.string(), children: v.array(v.lazy(() => Node)) });
    const b = build();
    const s = b.describe('v', {
      params: { kind: 'standard', schema: toStandardJsonSchema(v.strictObject({ lines: v.array(Line), note: v.optional(v.nullable(v.string())), tree: Node })) },
    });
    expect(s.params.descriptors.map((d) => [d.name, d.required])).toEqual([['lines', true], ['note', false], ['tree', true]]);
    expect(s.params.schema.additionalProperties).toBe(false);
    expect(s.params.descriptors[1].schema).toEqual({ anyOf: [{ type: 'string' }, { type: 'null' }] });
    expect(JSON.stringify(s.params.descriptors[2].schema)).toContain('#/components/schemas/0');
    expect(Object.keys(b.components())).toEqual(['0']);
  });

  it("ArkType: its root wrapper ($ref to a definition) is unwrapped; the scope's recursive type is a component", () => {
    const types = scope({ tree: { value: 'number', children: 'tree[]' } }).export();
    const b = build();
    const s = b.describe('a', { params: { kind: 'standard', schema: type({ tree: types.tree, 'other?': 'string', '+': 'reject' }) } });
    expect(s.params.descriptors.map((d) => [d.name, d.required])).toEqual([['tree', true], ['other', false]]);
    const ref = (s.params.descriptors[0].schema as { $ref: string }).$ref;
    expect(ref).toMatch(/^#\/components\/schemas\//);
    const components = b.components();
    expect(Object.keys(components).every((name) => JSON.stringify(components).includes(`#/components/schemas/${name}`))).toBe(true);
    expect(JSON.stringify(components)).not.toContain('$defs');
  });

  it('a schema without a converter, or whose converter refuses, is a failure naming method and place; jsonSchema describes it instead', () => {
    const noConverter: StandardSchemaV1 = { '~standard': { version: 1, vendor: 'acme', validate: (value) => ({ value }) } };
    const b = build();
    const s = b.describe('m', {
      params: { kind: 'named', rejectUnknown: true, params: [{ name: 'a', type: Object, schema: noConverter }] },
      result: z.object({ n: z.string().transform((x) => x.length) }),
      row: v.object({ a: v.string() }),
      rowJsonSchema: undefined,
    });
    expect(b.failures()).toEqual([
      { method: 'm', what: 'param "a"', message: expect.stringMatching(/^the acme schema has no JSON Schema converter \(~standard.jsonSchema\)/) },
      { method: 'm', what: 'result', message: 'the zod schema cannot describe its output as JSON Schema (Transforms cannot be represented in JSON Schema)' },
      { method: 'm', what: 'row', message: expect.stringMatching(/^the valibot schema has no JSON Schema converter.*toStandardJsonSchema\(\) of @valibot\/to-json-schema$/) },
    ]);
    expect(s.result).toEqual({});
    const given = build();
    const described = given.describe('m', {
      params: { kind: 'standard', schema: noConverter, jsonSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } },
      result: z.object({ n: z.string().transform((x) => x.length) }),
      resultJsonSchema: { type: 'object', properties: { n: { type: 'integer' } } },
    });
    expect(given.failures()).toEqual([]);
    expect(described.params.descriptors).toEqual([{ name: 'q', required: true, schema: { type: 'string' } }]);
    expect(described.result).toEqual({ type: 'object', properties: { n: { type: 'integer' } } });
  });

  it('@RpcParam schemas: each param described by its own schema, optional when it has a default', () => {
    const b = build();
    const s = b.describe('greet', {
      params: {
        kind: 'named',
        rejectUnknown: true,
        params: [
          { name: 'name', type: String, schema: z.string().min(1) },
          { name: 'times', type: Number, schema: z.number().int().default(1) },
          { name: 'to', type: Object, schema: Address, optional: true },
        ],
      },
    });
    expect(s.params.structure).toBe('either');
    expect(s.params.descriptors).toEqual([
      { name: 'name', required: true, schema: { type: 'string', minLength: 1 } },
      { name: 'times', required: false, schema: expect.objectContaining({ type: 'integer', default: 1 }) },
      { name: 'to', required: false, schema: { $ref: '#/components/schemas/Address' } },
    ]);
    expect(s.params.schema).toMatchObject({ type: 'object', required: ['name'], additionalProperties: false });
  });
});
