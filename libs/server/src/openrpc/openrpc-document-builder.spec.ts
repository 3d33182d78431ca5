import 'reflect-metadata';
import { Type } from 'class-transformer';
import { IsInt, IsNumber, IsOptional, IsString, MinLength, ValidateNested } from 'class-validator';
import { MethodSchemaBuilder } from '../schema/index.js';
import { buildOpenRpcDocument, RPC_DISCOVER_METHOD, type OpenRpcMethodSource } from './openrpc-document-builder.js';
import { dereferenceOpenRpc, validateOpenRpc } from './openrpc-validation.spec-support.js';

class AddDto { @IsNumber() a!: number; @IsNumber() b!: number; }
class SumResult { @IsNumber() sum!: number; }
class Address { @IsString() city!: string; }
class UpdateUserDto {
  @IsInt() id!: number;
  @IsOptional() @IsString() @MinLength(2) name?: string;
  @ValidateNested() @Type(() => Address) address!: Address;
}
class ChatRow { @IsString() delta!: string; }

function methods(): { sources: OpenRpcMethodSource[]; components: ReturnType<MethodSchemaBuilder['components']> } {
  const b = new MethodSchemaBuilder();
  const sources: OpenRpcMethodSource[] = [
    {
      name: 'math.add',
      summary: 'Adds two numbers',
      tags: ['math'],
      schemas: b.describe('math.add', { params: { kind: 'dto', dtoClass: AddDto, positional: false, rejectUnknown: true }, result: SumResult }),
      errors: [{ code: 1001, message: 'Overflow', data: { max: 100 } }],
      rateLimited: true,
    },
    {
      name: 'math.subtract',
      schemas: b.describe('math.subtract', { params: { kind: 'named', rejectUnknown: true, params: [{ name: 'minuend', type: Number }, { name: 'subtrahend', type: Number }] } }),
    },
    {
      name: 'user.update',
      description: 'Admins only <b>really</b>',
      tags: ['users'],
      hasRoles: true,
      deprecated: 'use user.patch',
      schemas: b.describe('user.update', { params: { kind: 'dto', dtoClass: UpdateUserDto, positional: false, rejectUnknown: true } }),
      errors: [{ code: -32001, message: 'Admins only' }],
    },
    {
      name: 'chat.stream',
      schemas: b.describe('chat.stream', { params: { kind: 'any' }, row: ChatRow }),
      stream: { format: 'sse', path: '/rpc/stream', durable: false },
    },
    { name: 'ping', schemas: b.describe('ping', { params: { kind: 'none' } }) },
  ];
  return { sources, components: b.components() };
}

const info = { title: 'Demo API', version: '1.2.3' };
const servers = [{ name: 'default', url: 'http://127.0.0.1:3000/rpc' }];

describe('buildOpenRpcDocument', () => {
  it('builds a document valid under @open-rpc/meta-schema whose $refs all resolve', async () => {
    const { sources, components } = methods();
    const doc = buildOpenRpcDocument({ info, servers, methods: sources, components });
    expect(validateOpenRpc(doc)).toBe(true);
    const dereferenced = await dereferenceOpenRpc(doc);
    const update = dereferenced.methods.find((m: any) => m.name === 'user.update') as any;
    expect(update.params[2].schema.properties.city).toEqual({ type: 'string' });
  });

  it('describes each method exactly', () => {
    const { sources, components } = methods();
    const doc = buildOpenRpcDocument({ info, servers, methods: sources, components });
    expect(doc.openrpc).toBe('1.3.2');
    expect(doc.info).toEqual(info);
    expect(doc.servers).toEqual(servers);
    expect(doc.methods).toEqual([
      {
        name: 'math.add',
        summary: 'Adds two numbers',
        tags: [{ name: 'math' }],
        paramStructure: 'by-name',
        params: [
          { name: 'a', required: true, schema: { type: 'number' } },
          { name: 'b', required: true, schema: { type: 'number' } },
        ],
        result: { name: 'result', schema: { $ref: '#/components/schemas/SumResult' } },
        errors: [
          { code: 1001, message: 'Overflow', data: { max: 100 } },
          { code: -32602, message: 'Invalid params' },
          { code: -32003, message: 'Rate limit exceeded' },
        ],
      },
      {
        name: 'math.subtract',
        paramStructure: 'either',
        params: [
          { name: 'minuend', required: true, schema: { type: 'number' } },
          { name: 'subtrahend', required: true, schema: { type: 'number' } },
        ],
        result: { name: 'result', schema: {} },
        errors: [{ code: -32602, message: 'Invalid params' }],
      },
      {
        name: 'user.update',
        description: 'Admins only <b>really</b>\n\nDeprecated: use user.patch',
        tags: [{ name: 'users' }],
        paramStructure: 'by-name',
        params: [
          { name: 'id', required: true, schema: { type: 'integer' } },
          { name: 'name', required: false, schema: { type: ['string', 'null'], minLength: 2 } },
          { name: 'address', required: false, schema: { $ref: '#/components/schemas/Address' } },
        ],
        result: { name: 'result', schema: {} },
        errors: [
          { code: -32001, message: 'Admins only' },
          { code: -32602, message: 'Invalid params' },
        ],
        deprecated: true,
      },
      {
        name: 'chat.stream',
        paramStructure: 'either',
        params: [],
        result: { name: 'result', schema: { $ref: '#/components/schemas/ChatRow' } },
        'x-stream': { format: 'sse', path: '/rpc/stream', durable: false },
      },
      { name: 'ping', paramStructure: 'by-name', params: [], result: { name: 'result', schema: {} } },
    ]);
    expect(Object.keys(doc.components.schemas)).toEqual(['Address', 'ChatRow', 'SumResult']);
    expect(doc.components.schemas.SumResult).toEqual({ type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'], additionalProperties: false });
    expect(Object.isFrozen(doc.methods[0].params[0])).toBe(true);
  });

  it('leaks neither an omitted method nor the components only it reaches', () => {
    const { sources, components } = methods();
    const visible = sources.filter((m) => !m.hasRoles);
    const doc = buildOpenRpcDocument({ info, servers, methods: visible, components });
    const text = JSON.stringify(doc);
    expect(text).not.toContain('user.update');
    expect(text).not.toContain('UpdateUserDto');
    expect(text).not.toContain('Address');
    expect(Object.keys(doc.components.schemas)).toEqual(['ChatRow', 'SumResult']);
    expect(validateOpenRpc(doc)).toBe(true);
  });

  it('lists rpc.discover only when asked, and stays valid with no methods at all', () => {
    const { sources, components } = methods();
    const withDiscover = buildOpenRpcDocument({ info, servers, methods: sources, components, includeDiscover: true });
    expect(withDiscover.methods.at(-1)).toEqual(RPC_DISCOVER_METHOD);
    expect(validateOpenRpc(withDiscover)).toBe(true);
    const empty = buildOpenRpcDocument({ info, servers, methods: [], components });
    expect(empty.methods).toEqual([]);
    expect(empty.components.schemas).toEqual({});
    expect(validateOpenRpc(empty)).toBe(true);
  });

  it('refuses a relative server url (the meta-schema requires a URI) and a method listed twice', () => {
    const { sources, components } = methods();
    expect(() => buildOpenRpcDocument({ info, servers: [{ name: 'x', url: '/rpc' }], methods: sources, components })).toThrow(
      'OpenRPC server url must be absolute (the meta-schema requires a URI), got "/rpc"',
    );
    expect(validateOpenRpc({ openrpc: '1.3.2', info, servers: [{ name: 'x', url: '/rpc' }], methods: [] })).not.toBe(true);
    expect(() => buildOpenRpcDocument({ info, servers, methods: [sources[0], sources[0]], components })).toThrow('OpenRPC: method "math.add" listed twice');
  });
});
