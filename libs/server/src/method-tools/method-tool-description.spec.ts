import 'reflect-metadata';
import { Type } from 'class-transformer';
import { IsString, ValidateNested } from 'class-validator';
import type { RpcMethodDefinition } from '../registry/rpc-method-definition.js';
import { MethodSchemaBuilder, type MethodSchemas } from '../schema/index.js';
import { methodToolDescription, methodToolParameters } from './method-tool-description.js';

class Place {
  @IsString() city!: string;
}
class Trip {
  @ValidateNested() @Type(() => Place) from!: Place;
}

/** The parts of a definition a tool's description reads. */
function definitionOf(name: string, schemas: MethodSchemas, options: { description?: string; summary?: string } = {}, mcp?: { description?: string }): RpcMethodDefinition {
  return { name, schemas, options, mcp } as unknown as RpcMethodDefinition;
}

describe('methodToolParameters (a tool\'s arguments, MCP and LLM alike)', () => {
  const builder = new MethodSchemaBuilder();
  const trip = builder.describe('trip.plan', { params: { kind: 'dto', dtoClass: Trip, positional: false, rejectUnknown: true } });
  const none = builder.describe('ping', { params: { kind: 'none' } });
  const any = builder.describe('raw', { params: { kind: 'any' } });
  const array = builder.describe('list', { params: { kind: 'schema', schema: { type: 'array', items: { type: 'number' } } } });
  const untyped = builder.describe('loose', { params: { kind: 'schema', schema: { required: ['q'] } } });
  const components = builder.components();
  const parameters = (name: string, schemas: MethodSchemas) => methodToolParameters(definitionOf(name, schemas), components);

  it('a DTO: its object, standalone — nested DTOs under $defs', () => {
    expect(parameters('trip.plan', trip)).toEqual({
      type: 'object',
      properties: { from: { $ref: '#/$defs/Place' } },
      additionalProperties: false,
      $defs: { Place: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false } },
    });
  });

  it('no params: an empty closed object; undescribed params or a schema without a type: an object root; an array schema: undefined', () => {
    expect(parameters('ping', none)).toEqual({ type: 'object', properties: {}, additionalProperties: false });
    expect(parameters('raw', any)).toEqual({ type: 'object', properties: {} });
    expect(parameters('loose', untyped)).toEqual({ type: 'object', properties: {}, required: ['q'] });
    expect(parameters('list', array)).toBeUndefined();
  });

  it('a root that only refers to a component is that component, its own keywords kept', () => {
    const referring = { ...trip, params: { ...trip.params, schema: { $ref: '#/components/schemas/Place', description: 'Where to' } } };
    expect(parameters('place.set', referring)).toEqual({
      type: 'object',
      properties: { city: { type: 'string' } },
      required: ['city'],
      additionalProperties: false,
      description: 'Where to',
    });
  });
});

describe('methodToolDescription', () => {
  const schemas = new MethodSchemaBuilder().describe('ping', { params: { kind: 'none' } });

  it('@RpcMcp description, else the method description, else its summary, else one sentence naming the method', () => {
    expect(methodToolDescription(definitionOf('a.b', schemas, { description: 'D', summary: 'S' }, { description: 'M' }))).toBe('M');
    expect(methodToolDescription(definitionOf('a.b', schemas, { description: 'D', summary: 'S' }, {}))).toBe('D');
    expect(methodToolDescription(definitionOf('a.b', schemas, { summary: 'S' }))).toBe('S');
    expect(methodToolDescription(definitionOf('a.b', schemas))).toBe('Calls the JSON-RPC method "a.b".');
  });
});
