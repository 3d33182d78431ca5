import { IsInt, IsString } from 'class-validator';
import * as v from 'valibot';
import { z } from 'zod';
import type { RpcContext } from '../context/rpc-context.js';
import type { RpcArgMetadata } from '../decorators/rpc-params.js';
import { RpcException } from '../errors/rpc-exceptions.js';
import { isDtoClass, ParamPlan, type ParamPlanInput } from './param-plan.js';

class Ctx {}

class Pair {
  @IsInt() a!: number;
  @IsInt() b!: number;
}

class Named {
  @IsString() name!: string;
}

const plan = (overrides: Partial<ParamPlanInput>) =>
  new ParamPlan({ method: 'm', paramTypes: [], args: [], rejectUnknown: true, allowPositional: false, contextClass: Ctx, ...overrides });

const param = (index: number, name: string, options?: RpcArgMetadata['options']): RpcArgMetadata => ({ index, kind: 'param', name, options });

/** The error `resolve` throws, as the client would see it. */
function errorOf(fn: () => unknown) {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(RpcException);
    return (error as RpcException).toErrorObject();
  }
  throw new Error('expected resolve to throw');
}

describe('isDtoClass', () => {
  it('is true for user classes only', () => {
    expect(isDtoClass(Pair)).toBe(true);
    for (const t of [undefined, Object, Function, Promise, Symbol, Date, BigInt, Number, String, Boolean, Array]) expect(isDtoClass(t)).toBe(false);
    expect(isDtoClass(Ctx, Ctx)).toBe(false);
    expect(isDtoClass('Pair')).toBe(false);
  });
});

describe('ParamPlan', () => {
  // The plan only hands the context through; any object stands in for it here.
  const ctx = new Ctx() as unknown as RpcContext;

  describe('undecorated handlers: (params, ctx)', () => {
    it('passes params as they came when the first parameter has no class', () => {
      const p = plan({ paramTypes: [Object, Ctx] });
      expect(p.argumentCount).toBe(2);
      expect(p.resolve({ x: 1 }, ctx)).toEqual([{ x: 1 }, ctx]);
      expect(p.resolve([1, 2], ctx)).toEqual([[1, 2], ctx]);
      expect(p.resolve(undefined, ctx)).toEqual([undefined, ctx]);
      expect(p.claimedKeys()).toEqual([]);
    });

    it('binds and validates a DTO first parameter', () => {
      const p = plan({ paramTypes: [Pair, Ctx] });
      const [dto, c] = p.resolve({ a: 1, b: 2 }, ctx) as unknown[];
      expect(dto).toBeInstanceOf(Pair);
      expect(c).toBe(ctx);
      expect(p.claimedKeys()).toEqual([{ argIndex: 0, keys: ['a', 'b'] }]);
      expect(errorOf(() => p.resolve({ a: 1 }, ctx))).toEqual({
        code: -32602, message: 'Invalid params', data: [{ path: 'b', message: 'b must be an integer number', code: 'isInt' }],
      });
    });

    it('a first parameter typed as the context class is not a DTO', () => {
      const p = plan({ paramTypes: [Ctx] });
      expect(p.resolve({ anything: 1 }, ctx)).toEqual([{ anything: 1 }, ctx]);
    });

    it('a DTO method refuses arrays unless positional params are allowed', () => {
      expect(errorOf(() => plan({ method: 'pair.add', paramTypes: [Pair] }).resolve([1, 2], ctx))).toEqual({
        code: -32602, message: 'Method "pair.add" requires named parameters',
      });
      const positional = plan({ paramTypes: [Pair], allowPositional: true });
      const [dto] = positional.resolve([1, 2], ctx) as [Pair];
      expect(dto).toEqual(Object.assign(new Pair(), { a: 1, b: 2 }));
      expect(errorOf(() => positional.resolve([1, 2, 3], ctx))).toEqual({
        code: -32602, message: 'Invalid params', data: [{ path: '2', message: 'Unknown parameter', code: null }],
      });
    });
  });

  describe('@RpcParam', () => {
    const subtract = () => plan({ paramTypes: [Number, Number], args: [param(1, 'subtrahend'), param(0, 'minuend')] });

    it('takes named keys, and items by the order of the decorated parameters', () => {
      expect(subtract().resolve({ subtrahend: 23, minuend: 42 }, ctx)).toEqual([42, 23]);
      expect(subtract().resolve([42, 23], ctx)).toEqual([42, 23]);
      expect(subtract().claimedKeys()).toEqual([{ argIndex: 0, keys: ['minuend'] }, { argIndex: 1, keys: ['subtrahend'] }]);
    });

    it('missing and mistyped params: each named in its own violation, the first in the message', () => {
      expect(errorOf(() => subtract().resolve({}, ctx))).toEqual({
        code: -32602,
        message: 'Missing required parameter "minuend"',
        data: [
          { path: 'minuend', message: 'Missing required parameter "minuend"', code: 'isDefined' },
          { path: 'subtrahend', message: 'Missing required parameter "subtrahend"', code: 'isDefined' },
        ],
      });
      expect(errorOf(() => subtract().resolve([true, 1], ctx))).toEqual({
        code: -32602,
        message: 'Parameter "minuend" must be a number',
        data: [{ path: 'minuend', message: 'Parameter "minuend" must be a number', code: 'isNumber' }],
      });
    });

    it('null is a value (of the wrong type), not an absence', () => {
      expect(errorOf(() => subtract().resolve({ minuend: null, subtrahend: 1 }, ctx)).message).toBe('Parameter "minuend" must be a number');
    });

    it('optional params become undefined, defaulted ones their default', () => {
      const p = plan({
        paramTypes: [String, Number, Boolean],
        args: [param(0, 'name'), param(1, 'times', { default: 2 }), param(2, 'loud', { optional: true })],
      });
      expect(p.resolve({ name: 'x' }, ctx)).toEqual(['x', 2, undefined]);
      expect(p.resolve(['x'], ctx)).toEqual(['x', 2, undefined]);
      expect(p.resolve(['x', 5, true], ctx)).toEqual(['x', 5, true]);
    });

    it('unknown keys and surplus items are rejected when rejectUnknown', () => {
      expect(errorOf(() => subtract().resolve({ minuend: 1, subtrahend: 2, x: 0, y: 0 }, ctx))).toEqual({
        code: -32602,
        message: 'Invalid params',
        data: [
          { path: 'x', message: 'Unknown parameter', code: null },
          { path: 'y', message: 'Unknown parameter', code: null },
        ],
      });
      expect(errorOf(() => subtract().resolve([1, 2, 3], ctx)).data).toEqual([
        { path: null, message: 'Too many parameters: expected at most 2', code: null },
      ]);
    });

    it('unknown keys and surplus items pass when not rejectUnknown', () => {
      const p = plan({ paramTypes: [Number], args: [param(0, 'a')], rejectUnknown: false });
      expect(p.resolve({ a: 1, b: 2 }, ctx)).toEqual([1]);
      expect(p.resolve([1, 2], ctx)).toEqual([1]);
    });

    it('a DTO-typed param is validated under its key', () => {
      const p = plan({ paramTypes: [Named], args: [param(0, 'who')] });
      expect((p.resolve({ who: { name: 'n' } }, ctx) as unknown[])[0]).toBeInstanceOf(Named);
      expect(errorOf(() => p.resolve({ who: { name: 1 } }, ctx)).data).toEqual([{ path: 'who.name', message: 'name must be a string', code: 'isString' }]);
      expect(errorOf(() => p.resolve({ who: [] }, ctx)).data).toEqual([{ path: 'who', message: 'Parameter "who" must be an object', code: 'isObject' }]);
    });

    it('untyped params are passed as they are', () => {
      const p = plan({ paramTypes: [Object], args: [param(0, 'anything')] });
      expect(p.resolve({ anything: [1, { a: 2 }] }, ctx)).toEqual([[1, { a: 2 }]]);
    });

    it('@RpcCtx and @RpcParams sit among them; a gap gets the raw params', () => {
      const p = plan({
        paramTypes: [Ctx, Object, Number],
        args: [{ index: 0, kind: 'ctx' }, { index: 2, kind: 'param', name: 'n' }],
      });
      expect(p.argumentCount).toBe(3);
      // The undecorated middle parameter claims the whole params, so no key is "unknown".
      expect(p.resolve({ n: 1, other: 2 }, ctx)).toEqual([ctx, { n: 1, other: 2 }, 1]);
    });

    it('claimedKeys exposes a key claimed twice (the explorer turns it into a startup error)', () => {
      const p = plan({ paramTypes: [Pair, Number], args: [{ index: 0, kind: 'params' }, param(1, 'a')] });
      expect(p.claimedKeys()).toEqual([{ argIndex: 0, keys: ['a', 'b'] }, { argIndex: 1, keys: ['a'] }]);
    });
  });
});

describe('ParamPlan with Standard Schemas', () => {
  const ctx = {} as RpcContext;
  const Order = z.strictObject({ email: z.email(), priority: z.number().int().max(10).default(3) });

  /** The error a Promise-returning `resolve` rejects with, as the client would see it. */
  async function asyncErrorOf(pending: unknown) {
    expect(pending).toBeInstanceOf(Promise);
    try {
      await pending;
    } catch (error) {
      expect(error).toBeInstanceOf(RpcException);
      return (error as RpcException).toErrorObject();
    }
    throw new Error('expected resolve to reject');
  }

  it('a params schema (@RpcMethod params) validates synchronously and the undecorated argument receives its output', () => {
    const p = plan({ paramTypes: [Object, Ctx], paramsSchema: Order });
    expect(p.resolve({ email: 'a@b.example' }, ctx)).toEqual([{ email: 'a@b.example', priority: 3 }, ctx]);
    expect(errorOf(() => p.resolve({ email: 'x', priority: 11, extra: 1 }, ctx))).toEqual({
      code: -32602,
      message: 'Invalid params',
      data: [
        { path: 'email', message: 'Invalid email address', code: 'invalid_format' },
        { path: 'priority', message: 'Too big: expected number to be <=10', code: 'too_big' },
        { path: 'extra', message: 'Unrecognized key: "extra"', code: 'unrecognized_keys' },
      ],
    });
    expect(p.shape).toEqual({ kind: 'schema', schema: Order, jsonSchema: undefined });
    expect(p.problems()).toEqual([]);
  });

  it('absent params are an empty object to the schema, as to a DTO', () => {
    const p = plan({ paramTypes: [Object], paramsSchema: z.object({ page: z.number().default(1) }) });
    expect(p.resolve(undefined, ctx)).toEqual([{ page: 1 }, ctx]);
  });

  it('@RpcParams({ schema }) is the same params schema; @RpcParam arguments pick from its output, unchecked', () => {
    const p = plan({
      paramTypes: [Object, String, Number],
      args: [{ index: 0, kind: 'params', options: { schema: Order } }, param(1, 'email'), param(2, 'priority')],
    });
    expect(p.resolve({ email: 'a@b.example' }, ctx)).toEqual([{ email: 'a@b.example', priority: 3 }, 'a@b.example', 3]);
    expect(p.shape.kind).toBe('schema');
    // The schema decides about unknown keys (a strict object refuses them), not rejectUnknown.
    expect(errorOf(() => p.resolve({ email: 'a@b.example', x: 1 }, ctx)).data).toEqual([{ path: 'x', message: 'Unrecognized key: "x"', code: 'unrecognized_keys' }]);
    const loose = plan({ paramTypes: [Object], paramsSchema: z.object({ a: z.number() }), rejectUnknown: true });
    expect(loose.resolve({ a: 1, b: 2 }, ctx)).toEqual([{ a: 1 }, ctx]);
  });

  it('an async refinement makes resolve return a Promise: its issues are -32602, its throw propagates', async () => {
    const taken = new Set(['ada']);
    const Signup = z.object({
      user: z.string().refine(async (u) => {
        if (u === 'boom') throw new Error('directory down');
        return !taken.has(u);
      }, 'Username is taken'),
    });
    const p = plan({ paramTypes: [Object], paramsSchema: Signup });
    await expect(p.resolve({ user: 'bob' }, ctx)).resolves.toEqual([{ user: 'bob' }, ctx]);
    expect((await asyncErrorOf(p.resolve({ user: 'ada' }, ctx))).data).toEqual([{ path: 'user', message: 'Username is taken', code: 'custom' }]);
    await expect(p.resolve({ user: 'boom' }, ctx)).rejects.toThrow('directory down');
  });

  it('@RpcParam(name, { schema }) validates that value (absent ones too, unless optional) under the name', async () => {
    const p = plan({
      paramTypes: [String, Number, Array],
      args: [
        param(0, 'name', { schema: z.string().trim().min(1) }),
        param(1, 'times', { schema: z.number().int().default(2) }),
        param(2, 'tags', { schema: v.array(v.string()), optional: true }),
      ],
    });
    expect(p.resolve({ name: '  x ' }, ctx)).toEqual(['x', 2, undefined]);
    expect(p.resolve(['x', 5, ['a']], ctx)).toEqual(['x', 5, ['a']]);
    expect(errorOf(() => p.resolve({ times: 1.5, tags: [1] }, ctx))).toEqual({
      code: -32602,
      message: 'Invalid params',
      data: [
        { path: 'name', message: 'Invalid input: expected string, received undefined', code: 'invalid_type' },
        { path: 'times', message: 'Invalid input: expected int, received number', code: 'invalid_type' },
        { path: 'tags.0', message: 'Invalid type: Expected string but received 1', code: 'string' },
      ],
    });
    // rejectUnknown still applies to the params object a list of @RpcParam makes.
    expect(errorOf(() => p.resolve({ name: 'x', other: 1 }, ctx)).data).toEqual([{ path: 'other', message: 'Unknown parameter', code: null }]);
    const async = plan({ paramTypes: [String, String], args: [param(0, 'a', { schema: z.string().refine(async (s) => s !== 'no', 'refused') }), param(1, 'b', { schema: z.string() })] });
    await expect(async.resolve({ a: 'yes', b: 'x' }, ctx)).resolves.toEqual(['yes', 'x']);
    // The synchronous issue first, then the settled ones.
    expect(((await asyncErrorOf(async.resolve({ a: 'no', b: 1 }, ctx))).data as Array<{ path: string }>).map((e: { path: string }) => e.path)).toEqual(['b', 'a']);
    expect(async.shape).toMatchObject({ kind: 'named', params: [{ name: 'a', schema: expect.anything() }, { name: 'b', schema: expect.anything() }] });
  });

  it('reports two sources of one params, and schema options that are not schemas, as startup problems', () => {
    const problems = (overrides: Partial<ParamPlanInput>) => plan(overrides).problems();
    expect(problems({ paramTypes: [Pair], paramsSchema: Order })).toEqual([
      'argument 0 is a DTO (Pair) and the method has a params schema: params take one source, the DTO or the schema',
    ]);
    expect(problems({ paramTypes: [Pair], args: [{ index: 0, kind: 'params', options: { schema: Order } }] })[0]).toMatch(/argument 0 is typed with the DTO class Pair and has @RpcParams\({ schema }\)/);
    expect(problems({ paramTypes: [Object], args: [{ index: 0, kind: 'params', options: { schema: Order } }], paramsSchema: z.object({}) })[0]).toMatch(/different params schema/);
    expect(problems({ paramTypes: [Object], args: [{ index: 0, kind: 'params', options: { schema: Order } }], paramsSchema: Order })).toEqual([]);
    expect(problems({ paramTypes: [String], args: [param(0, 'a', { schema: z.string() })], paramsSchema: Order })[0]).toMatch(/@RpcParam\("a"\) has a schema and the method has a params schema/);
    expect(problems({ paramTypes: [Named], args: [param(0, 'who')], paramsSchema: Order })[0]).toMatch(/@RpcParam\("who"\) is a DTO \(Named\)/);
    expect(problems({ paramTypes: [Named], args: [param(0, 'who', { schema: Order })] })[0]).toMatch(/typed with the DTO class Named and has a schema/);
    expect(problems({ paramTypes: [Object], paramsSchema: Order, allowPositional: true })[0]).toMatch(/allowPositional/);
    expect(problems({ paramTypes: [String], args: [param(0, 'a', { schema: { type: 'string' } as never })] })[0]).toMatch(/must be a Standard Schema/);
    expect(problems({ paramTypes: [String], args: [param(0, 'a', { jsonSchema: { type: 'string' } })] })[0]).toMatch(/describes a schema, and there is none/);
    expect(problems({ paramTypes: [Object], paramsJsonSchema: { type: 'object' } })[0]).toMatch(/jsonSchema.params/);
  });

  it("a function type without class-validator constraints is no second source: swc records zod's runtime z.output for `p: z.output<typeof S>`", () => {
    expect(typeof z.output).toBe('function');
    const p = plan({ paramTypes: [z.output, Ctx], paramsSchema: Order });
    expect(p.problems()).toEqual([]);
    expect(p.resolve({ email: 'a@b.example' }, ctx)).toEqual([{ email: 'a@b.example', priority: 3 }, ctx]);
    expect(plan({ paramTypes: [z.output], args: [{ index: 0, kind: 'params', options: { schema: Order } }] }).problems()).toEqual([]);
    expect(plan({ paramTypes: [z.input], args: [param(0, 'x', { schema: z.string() })] }).problems()).toEqual([]);
  });
});
