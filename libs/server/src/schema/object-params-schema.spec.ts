import 'reflect-metadata';
import { Type } from 'class-transformer';
import { IsString, ValidateNested } from 'class-validator';
import { MethodSchemaBuilder, objectParamsSchema } from './index.js';

class Place {
  @IsString() city!: string;
}
class Trip {
  @ValidateNested() @Type(() => Place) from!: Place;
}

describe('objectParamsSchema (tool arguments)', () => {
  const builder = new MethodSchemaBuilder();
  const trip = builder.describe('trip.plan', { params: { kind: 'dto', dtoClass: Trip, positional: false, rejectUnknown: true } });
  const none = builder.describe('ping', { params: { kind: 'none' } });
  const any = builder.describe('raw', { params: { kind: 'any' } });
  const array = builder.describe('list', { params: { kind: 'schema', schema: { type: 'array', items: { type: 'number' } } } });
  const untyped = builder.describe('loose', { params: { kind: 'schema', schema: { required: ['q'] } } });
  const components = builder.components();

  it('a DTO: its object, standalone — nested DTOs under $defs', () => {
    expect(objectParamsSchema(trip.params, components)).toEqual({
      type: 'object',
      properties: { from: { $ref: '#/$defs/Place' } },
      additionalProperties: false,
      $defs: { Place: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false } },
    });
  });

  it('no params: an empty closed object; undescribed params or a schema without a type: an object root; an array schema: undefined', () => {
    expect(objectParamsSchema(none.params, components)).toEqual({ type: 'object', properties: {}, additionalProperties: false });
    expect(objectParamsSchema(any.params, components)).toEqual({ type: 'object', properties: {} });
    expect(objectParamsSchema(untyped.params, components)).toEqual({ type: 'object', properties: {}, required: ['q'] });
    expect(objectParamsSchema(array.params, components)).toBeUndefined();
  });
});
