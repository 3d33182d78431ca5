import { type } from 'arktype';
import * as v from 'valibot';
import { z } from 'zod';
import type { StandardSchemaV1 } from '../decorators/standard-schema.js';
import type { ParamViolation } from './param-violation.js';
import { appendSchemaIssues, isPendingResult, SCHEMA_ISSUE_FALLBACK_CODE, StandardSchemaCheck } from './standard-schema-check.js';

/** A hand-written Standard Schema: what a library without issue codes gives. */
function custom(validate: StandardSchemaV1.Props['validate']): StandardSchemaV1 {
  return { '~standard': { version: 1, vendor: 'custom', validate } };
}

function violationsOf(schema: StandardSchemaV1, value: unknown, prefix = ''): ParamViolation[] {
  const result = new StandardSchemaCheck(schema).check(value);
  if (isPendingResult(result)) throw new Error('expected a synchronous result');
  const out: ParamViolation[] = [];
  if (result.issues) appendSchemaIssues(result.issues, prefix, out);
  return out;
}

const lines = { email: 'nope', lines: [{ sku: 'a', qty: 1 }, { sku: 3, qty: 0 }] };

describe('StandardSchemaCheck and appendSchemaIssues', () => {
  it('zod: dotted paths with numeric indices, zod issue codes, one entry per issue', () => {
    const schema = z.object({ email: z.email(), lines: z.array(z.object({ sku: z.string(), qty: z.number().int().min(1) })) });
    expect(violationsOf(schema, lines)).toEqual([
      { path: 'email', message: 'Invalid email address', code: 'invalid_format' },
      { path: 'lines.1.sku', message: 'Invalid input: expected string, received number', code: 'invalid_type' },
      { path: 'lines.1.qty', message: 'Too small: expected number to be >=1', code: 'too_small' },
    ]);
  });

  it('Valibot: path segments given as objects, the issue type as code', () => {
    const schema = v.object({ email: v.pipe(v.string(), v.email()), lines: v.array(v.object({ sku: v.string(), qty: v.pipe(v.number(), v.integer(), v.minValue(1)) })) });
    expect(violationsOf(schema, lines).map(({ path, code }) => [path, code])).toEqual([
      ['email', 'email'],
      ['lines.1.sku', 'string'],
      ['lines.1.qty', 'min_value'],
    ]);
  });

  it('ArkType: its issue codes', () => {
    const schema = type({ email: 'string.email', lines: type({ sku: 'string', qty: 'number.integer >= 1' }).array() });
    expect(violationsOf(schema, lines).map(({ path, code }) => [path, code]).sort()).toEqual([
      ['email', 'pattern'],
      ['lines.1.qty', 'min'],
      ['lines.1.sku', 'domain'],
    ]);
  });

  it('puts the prefix before every path; a root issue has the prefix itself ("" at the top)', () => {
    expect(violationsOf(z.string(), 5, 'who')).toEqual([{ path: 'who', message: 'Invalid input: expected string, received number', code: 'invalid_type' }]);
    expect(violationsOf(z.string(), 5)).toEqual([{ path: '', message: 'Invalid input: expected string, received number', code: 'invalid_type' }]);
    expect(violationsOf(z.object({ a: z.object({ b: z.number() }) }), { a: { b: 'x' } }, 'p')[0].path).toBe('p.a.b');
  });

  it("zod's unrecognized keys become one entry per key, at the key's own path (as ArkType, Valibot and DTOs report them)", () => {
    const schema = z.strictObject({ a: z.number(), inner: z.strictObject({ b: z.number() }) });
    expect(violationsOf(schema, { a: 1, inner: { b: 1, y: 2 }, x: 1, z: 2 })).toEqual([
      { path: 'inner.y', message: 'Unrecognized key: "y"', code: 'unrecognized_keys' },
      { path: 'x', message: 'Unrecognized keys: "x", "z"', code: 'unrecognized_keys' },
      { path: 'z', message: 'Unrecognized keys: "x", "z"', code: 'unrecognized_keys' },
    ]);
    expect(violationsOf(v.strictObject({ a: v.number() }), { a: 1, x: 1 }).map((e) => e.path)).toEqual(['x']);
    expect(violationsOf(type({ a: 'number', '+': 'reject' }), { a: 1, x: 1 }).map((e) => e.path)).toEqual(['x']);
  });

  it('a library without issue codes gets the stable fallback; symbol and numeric keys are written as strings', () => {
    const schema = custom(() => ({ issues: [{ message: 'bad', path: [{ key: 'a' }, 0, Symbol('s')] }, { message: 'root' }] }));
    expect(violationsOf(schema, 1)).toEqual([
      { path: 'a.0.Symbol(s)', message: 'bad', code: SCHEMA_ISSUE_FALLBACK_CODE },
      { path: '', message: 'root', code: SCHEMA_ISSUE_FALLBACK_CODE },
    ]);
  });

  it('bounds a message that quotes a huge value, without cutting a surrogate pair', () => {
    const [entry] = violationsOf(custom(() => ({ issues: [{ message: 'x'.repeat(499) + '😀'.repeat(1000) }] })), 1);
    expect(entry.message).toBe('x'.repeat(499) + '…');
    expect(violationsOf(type("'a' | 'b'"), 'y'.repeat(100_000))[0].message.length).toBeLessThanOrEqual(501);
  });

  it('answers the library result synchronously when the schema is synchronous, a Promise when it is not', async () => {
    const check = new StandardSchemaCheck(z.object({ n: z.number() }));
    expect(check.check({ n: 1 })).toEqual({ value: { n: 1 } });
    const async = new StandardSchemaCheck(z.string().refine(async (s) => s === 'ok', 'not ok'));
    const pending = async.check('nope');
    expect(isPendingResult(pending)).toBe(true);
    const out: ParamViolation[] = [];
    appendSchemaIssues((await pending).issues!, '', out);
    expect(out).toEqual([{ path: '', message: 'not ok', code: 'custom' }]);
  });

  it('a schema that recurses past the stack answers maxDepth, sync or async; any other throw propagates', async () => {
    type Tree = { child?: Tree };
    const tree: z.ZodType<Tree> = z.lazy(() => z.object({ child: tree.optional() }));
    let deep: Tree = {};
    for (let i = 0; i < 20_000; i++) deep = { child: deep };
    // zod retries a parse that threw as an async parse, which overflows too.
    expect((await new StandardSchemaCheck(tree).check(deep)).issues).toEqual([{ path: [], message: 'Params are nested too deeply', code: 'maxDepth' }]);
    const arkTree = type({ 'child?': 'this' });
    expect(violationsOf(arkTree, deep)).toEqual([{ path: '', message: 'Params are nested too deeply', code: 'maxDepth' }]);
    const overflowing = custom(() => Promise.reject(new RangeError('Maximum call stack size exceeded')));
    expect((await new StandardSchemaCheck(overflowing).check(1)).issues?.[0]).toMatchObject({ code: 'maxDepth' });
    const failing = custom(async () => {
      throw new Error('database down');
    });
    await expect(new StandardSchemaCheck(failing).check(1)).rejects.toThrow('database down');
    expect(() => new StandardSchemaCheck(custom(() => { throw new TypeError('bug'); })).check(1)).toThrow('bug');
  });

  it('a zod schema with an async refinement is validated once per call, and a rejecting refinement leaves no unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      let runs = 0;
      const schema = z.object({
        user: z.string().refine(async (u) => {
          runs++;
          if (u === 'boom') throw new Error('directory down');
          return u !== 'taken';
        }, 'Username is taken'),
      });
      const check = new StandardSchemaCheck(schema);
      expect(await check.check({ user: 'ok' })).toEqual({ value: { user: 'ok' } });
      expect((await check.check({ user: 'taken' })).issues?.[0]).toMatchObject({ message: 'Username is taken', path: ['user'] });
      await expect(check.check({ user: 'boom' })).rejects.toThrow('directory down');
      expect(runs).toBe(3);
      // One that returns a Promise from a plain function is learnt on its first answer.
      let plainRuns = 0;
      const plain = new StandardSchemaCheck(z.string().refine((u) => (plainRuns++, Promise.resolve(u !== 'x'))));
      await plain.check('a');
      await plain.check('b');
      expect(plainRuns).toBe(3);
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('reads ~standard once (Valibot builds it afresh on every read)', () => {
    let reads = 0;
    const props = { version: 1 as const, vendor: 'counting', validate: (value: unknown) => ({ value }) };
    const schema = { get '~standard'() { reads++; return props; } };
    const check = new StandardSchemaCheck(schema);
    for (let i = 0; i < 5; i++) check.check(i);
    expect(reads).toBe(1);
    expect(check.vendor).toBe('counting');
  });
});
