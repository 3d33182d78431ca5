import { IsInt, IsString } from 'class-validator';
import type { RpcContext } from '../context/rpc-context.js';
import type { RpcArgMetadata } from '../decorators/rpc-param.decorators.js';
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
      const [dto, c] = p.resolve({ a: 1, b: 2 }, ctx);
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
      expect(p.resolve({ who: { name: 'n' } }, ctx)[0]).toBeInstanceOf(Named);
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
