import type { StandardJSONSchemaV1 as SpecJsonSchema, StandardSchemaV1 as SpecSchema } from '@standard-schema/spec';
import { toStandardJsonSchema } from '@valibot/to-json-schema';
import { type } from 'arktype';
import * as v from 'valibot';
import { z } from 'zod';
import type { RpcParamOptions } from './rpc-params.js';
import type { RpcMethodOptions } from './rpc-method.js';
import type { RpcStreamOptions } from './rpc-stream.js';
import { isStandardSchema, type RpcSchemaOutput, type StandardJSONSchemaV1, type StandardSchemaV1 } from './standard-schema.js';

/** Compile-time equality of two types (checked by `npm run typecheck`). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const assertType = <T extends true>(): T => true as T;

// The copied interfaces and the package's are interchangeable, both ways.
const fromSpec = (s: SpecSchema<{ a: string }, { a: number }>): StandardSchemaV1<{ a: string }, { a: number }> => s;
const toSpec = (s: StandardSchemaV1<{ a: string }, { a: number }>): SpecSchema<{ a: string }, { a: number }> => s;
const jsonFromSpec = (s: SpecJsonSchema): StandardJSONSchemaV1 => s;
const jsonToSpec = (s: StandardJSONSchemaV1): SpecJsonSchema => s;

const Order = z.object({ qty: z.string().transform(Number), note: z.string().default('') });

describe('the Standard Schema types and guard', () => {
  it('zod, Valibot and ArkType schemas fit every option that takes a schema; RpcSchemaOutput is the output side', () => {
    const method: RpcMethodOptions = { params: Order, result: type({ n: 'number' }), jsonSchema: { result: { type: 'object' } } };
    const stream: RpcStreamOptions = { row: toStandardJsonSchema(v.object({ a: v.string() })) };
    const param: RpcParamOptions = { schema: v.pipe(v.string(), v.minLength(1)) };
    assertType<Equal<RpcSchemaOutput<typeof Order>, { qty: number; note: string }>>();
    expect([method, stream, param, fromSpec, toSpec, jsonFromSpec, jsonToSpec].length).toBe(7);
  });

  it('isStandardSchema: schemas of every library (an ArkType one is a function), nothing else', () => {
    for (const schema of [Order, v.string(), toStandardJsonSchema(v.string()), type('string')]) expect(isStandardSchema(schema)).toBe(true);
    expect(typeof type('string')).toBe('function');
    for (const other of [undefined, null, 'x', { type: 'object' }, { '~standard': {} }, { '~standard': { validate: 'no' } }, class Dto {}, () => 1, true]) {
      expect(isStandardSchema(other)).toBe(false);
    }
  });
});
