import 'reflect-metadata';
import { Type } from 'class-transformer';
import {
  IsDateString, IsEmail, IsEnum, IsIn, IsInt, IsLowercase, IsNumber, IsOptional, IsString, IsStrongPassword, IsUrl, IsUUID,
  Matches, Max, MaxLength, Min, MinLength, ValidateIf, ValidateNested,
} from 'class-validator';
import { MethodSchemaBuilder, reachableComponents, standaloneSchema, type SchemaProblem } from './index.js';

enum Color { Red = 'red', Green = 'green' }
enum Priority { Low, High }

class IntFirst { @IsInt() @Min(1) @Max(9) n!: number; }
class IntLast { @Min(1) @Max(9) @IsInt() n!: number; }

class Address {
  @IsString() @MinLength(2) @MaxLength(40) city!: string;
  @IsOptional() @Matches(/^[0-9]{5}$/) zip?: string;
}
class Person {
  @IsEmail() email!: string;
  @IsUrl() site!: string;
  @IsUUID() id!: string;
  @IsDateString() born!: string;
  @IsEnum(Color) color!: Color;
  @IsEnum(Priority) priority!: Priority;
  @IsIn([1, 2, 3]) rank!: number;
  @IsNumber() @Min(0.5) score!: number;
  @ValidateNested() @Type(() => Address) home!: Address;
  @ValidateNested({ each: true }) @Type(() => Address) others!: Address[];
}
class TreeNode {
  @IsString() label!: string;
  @IsOptional() @ValidateNested({ each: true }) @Type(() => TreeNode) children?: TreeNode[];
}

function twoClassesNamedItem() {
  const a = (() => { class Item { @IsString() a!: string; } return Item; })();
  const b = (() => { class Item { @IsInt() b!: number; } return Item; })();
  return [a, b] as const;
}

describe('MethodSchemaBuilder', () => {
  it('gives @IsInt integer whatever the decorator order', () => {
    const builder = new MethodSchemaBuilder();
    for (const dtoClass of [IntFirst, IntLast]) {
      const m = builder.describe('m', { params: { kind: 'dto', dtoClass, positional: false, rejectUnknown: true } });
      expect(m.params.descriptors).toEqual([{ name: 'n', required: true, schema: { type: 'integer', minimum: 1, maximum: 9 } }]);
    }
  });

  it('describes formats, bounds, patterns, enums, nested DTOs and arrays of DTOs as components', () => {
    const builder = new MethodSchemaBuilder();
    const m = builder.describe('person.create', { params: { kind: 'dto', dtoClass: Person, positional: false, rejectUnknown: true } });
    expect(m.params.structure).toBe('by-name');
    expect(m.params.described).toBe(true);
    expect(Object.fromEntries(m.params.descriptors.map((d) => [d.name, d.schema]))).toEqual({
      email: { type: 'string', format: 'email' },
      site: { type: 'string', format: 'uri' },
      id: { type: 'string', format: 'uuid' },
      born: { type: 'string', format: 'date-time' },
      color: { type: 'string', enum: ['red', 'green'] },
      // class-validator's IsEnum also accepts a numeric enum's reverse-mapped names.
      priority: { enum: ['Low', 'High', 0, 1] },
      rank: { type: 'integer', enum: [1, 2, 3] },
      score: { type: 'number', minimum: 0.5 },
      home: { $ref: '#/components/schemas/Address' },
      others: { type: 'array', items: { $ref: '#/components/schemas/Address' } },
    });
    expect(m.params.descriptors.map((d) => d.name)).toEqual(['email', 'site', 'id', 'born', 'color', 'priority', 'rank', 'score', 'home', 'others']);
    // class-validator skips a missing value under @ValidateNested alone: not required.
    expect(m.params.descriptors.filter((d) => !d.required).map((d) => d.name)).toEqual(['home', 'others']);
    expect(builder.components().Address).toEqual({
      type: 'object',
      properties: {
        city: { type: 'string', minLength: 2, maxLength: 40 },
        zip: { type: ['string', 'null'], pattern: '^[0-9]{5}$' },
      },
      required: ['city'],
      additionalProperties: false,
    });
    expect(builder.problems()).toEqual([]);
  });

  it('references a DTO shared by two methods once, and names two classes called Item apart', () => {
    const [ItemA, ItemB] = twoClassesNamedItem();
    const builder = new MethodSchemaBuilder();
    builder.describe('a', { params: { kind: 'named', params: [{ name: 'item', type: ItemA }], rejectUnknown: true }, result: Address });
    builder.describe('b', { params: { kind: 'named', params: [{ name: 'item', type: ItemB }], rejectUnknown: true }, result: Address });
    const again = builder.describe('c', { params: { kind: 'none' }, result: ItemA });
    expect(again.result).toEqual({ $ref: '#/components/schemas/Item' });
    const components = builder.components();
    expect(Object.keys(components).sort()).toEqual(['Address', 'Item', 'Item_2']);
    expect(components.Item.properties).toEqual({ a: { type: 'string' } });
    expect(components.Item_2.properties).toEqual({ b: { type: 'integer' } });
  });

  it('terminates on self-referencing DTOs', () => {
    const builder = new MethodSchemaBuilder();
    const m = builder.describe('tree', { params: { kind: 'named', params: [{ name: 'root', type: TreeNode }], rejectUnknown: true } });
    expect(m.params.descriptors[0].schema).toEqual({ $ref: '#/components/schemas/TreeNode' });
    expect(builder.components().TreeNode.properties).toEqual({
      label: { type: 'string' },
      children: { type: ['array', 'null'], items: { $ref: '#/components/schemas/TreeNode' } },
    });
  });

  it('describes @RpcParam methods by name and position, required unless optional or defaulted', () => {
    const builder = new MethodSchemaBuilder();
    const m = builder.describe('math.subtract', {
      params: {
        kind: 'named',
        rejectUnknown: true,
        params: [
          { name: 'minuend', type: Number },
          { name: 'subtrahend', type: Number, default: 0 },
          { name: 'label', type: String, optional: true },
          { name: 'flags', type: Array },
          { name: 'anything', type: Object },
        ],
      },
    });
    expect(m.params).toEqual({
      structure: 'either',
      described: true,
      descriptors: [
        { name: 'minuend', required: true, schema: { type: 'number' } },
        { name: 'subtrahend', required: false, schema: { type: 'number', default: 0 } },
        { name: 'label', required: false, schema: { type: 'string' } },
        { name: 'flags', required: true, schema: { type: 'array' } },
        { name: 'anything', required: true, schema: {} },
      ],
      schema: {
        type: 'object',
        properties: { minuend: { type: 'number' }, subtrahend: { type: 'number', default: 0 }, label: { type: 'string' }, flags: { type: 'array' }, anything: {} },
        required: ['minuend', 'flags', 'anything'],
        additionalProperties: false,
      },
    });
  });

  it('takes an explicit params schema, result and row schemas, and is permissive when nothing is said', () => {
    const given = { type: 'object', properties: { q: { type: 'string' }, n: { type: 'integer' } }, required: ['q'] };
    const builder = new MethodSchemaBuilder();
    const m = builder.describe('search', { params: { kind: 'schema', schema: given }, result: { type: 'array' }, row: Address });
    expect(m.params.structure).toBe('by-name');
    expect(m.params.descriptors).toEqual([
      { name: 'q', required: true, schema: { type: 'string' } },
      { name: 'n', required: false, schema: { type: 'integer' } },
    ]);
    expect(m.result).toEqual({ type: 'array' });
    expect(m.row).toEqual({ $ref: '#/components/schemas/Address' });
    expect(Object.isFrozen(m.params.schema)).toBe(true);
    expect(Object.isFrozen(given)).toBe(false);
    const bare = builder.describe('raw', { params: { kind: 'any' } });
    expect(bare).toEqual({ params: { structure: 'either', described: false, descriptors: [], schema: {} }, result: {}, row: undefined });
    expect(builder.describe('ping', { params: { kind: 'none' } }).params).toEqual({
      structure: 'by-name', described: false, descriptors: [], schema: { type: 'object', properties: {}, additionalProperties: false },
    });
  });

  it('keeps allowPositional DTOs in declaration order with structure either', () => {
    const m = new MethodSchemaBuilder().describe('m', { params: { kind: 'dto', dtoClass: Address, positional: true, rejectUnknown: true } });
    expect(m.params.structure).toBe('either');
    expect(m.params.descriptors.map((d) => [d.name, d.required])).toEqual([['city', true], ['zip', false]]);
  });

  it('builds an open variant for rejectUnknown: false next to the closed one', () => {
    const builder = new MethodSchemaBuilder();
    builder.describe('strict', { params: { kind: 'named', params: [{ name: 'a', type: Address }], rejectUnknown: true } });
    const loose = builder.describe('loose', { params: { kind: 'dto', dtoClass: Address, positional: false, rejectUnknown: false } });
    expect(loose.params.schema.additionalProperties).toBeUndefined();
    expect(builder.components().Address.additionalProperties).toBe(false);
    expect(builder.components().Address_open.additionalProperties).toBeUndefined();
  });

  it('reports what it cannot express once, leaves it permissive and never throws', () => {
    class Account {
      @IsStrongPassword() password!: string;
      @IsLowercase() @IsString() handle!: string;
      @ValidateIf((o: Account) => o.handle === 'x') @IsString() reason?: string;
    }
    const seen: SchemaProblem[] = [];
    const builder = new MethodSchemaBuilder({ onProblem: (p) => seen.push(p) });
    const a = builder.describe('a', { params: { kind: 'dto', dtoClass: Account, positional: false, rejectUnknown: true } });
    builder.describe('b', { params: { kind: 'dto', dtoClass: Account, positional: false, rejectUnknown: true } });
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    builder.describe('c', { params: { kind: 'schema', schema: cyclic }, result: { bad: BigInt(1) } as never });
    expect(seen).toEqual([
      { where: 'Account.password', message: 'constraint "isStrongPassword" has no JSON Schema equivalent: only its declared type is described' },
      { where: 'Account.handle', message: 'lower case is not checked by the schema' },
      { where: 'Account.reason', message: 'is validated only under a condition (@ValidateIf): the schema treats it as optional' },
      { where: 'c params', message: 'is not a JSON value: left undescribed' },
      { where: 'c result', message: 'is not a JSON value: left undescribed' },
    ]);
    expect(builder.problems()).toEqual(seen);
    expect(Object.fromEntries(a.params.descriptors.map((d) => [d.name, [d.required, d.schema]]))).toEqual({
      password: [true, { type: 'string' }],
      handle: [true, { type: 'string' }],
      reason: [false, { type: 'string' }],
    });
  });

  it('finds only the components a set of schemas reaches, and bundles one schema with $defs', () => {
    const builder = new MethodSchemaBuilder();
    const person = builder.describe('p', { params: { kind: 'dto', dtoClass: Person, positional: false, rejectUnknown: true } });
    builder.describe('t', { params: { kind: 'none' }, result: TreeNode });
    const components = builder.components();
    expect(reachableComponents(person.params.descriptors.map((d) => d.schema), components)).toEqual(['Address']);
    expect(reachableComponents([{ enum: [{ $ref: '#/components/schemas/TreeNode' }] }], components)).toEqual([]);
    const standalone = standaloneSchema(person.params.schema, components) as Record<string, any>;
    expect(standalone.properties.home).toEqual({ $ref: '#/$defs/Address' });
    expect(Object.keys(standalone.$defs)).toEqual(['Address']);
    expect(standalone.$defs.Address.required).toEqual(['city']);
  });
});
