import { Type } from 'class-transformer';
import { IsEmail, IsInt, IsOptional, IsString, Max, Min, ValidateNested } from 'class-validator';
import { DtoBinder } from './dto-binder.js';
import type { ParamViolation } from './param-violation.js';

class Line {
  @IsString() sku!: string;
  @IsInt() @Min(1) qty!: number;
}

class Order {
  @IsEmail() email!: string;
  @IsInt() @Min(0) @Max(10) priority!: number;
  @ValidateNested({ each: true }) @Type(() => Line) lines!: Line[];
  @IsOptional() @IsString() note?: string;
}

class Base {
  @IsString() id!: string;
}

class Derived extends Base {
  @IsInt() version!: number;
}

describe('DtoBinder', () => {
  it('refuses a `constructor` key at any depth with -32602 data, instead of class-transformer throwing a TypeError (found by the fuzzer)', () => {
    for (const [value, path] of [
      [{ email: 'a@b.example', priority: 1, lines: [], x: { constructor: 1 } }, 'x.constructor'],
      [{ email: 'a@b.example', priority: 1, lines: [{ sku: 'a', qty: 1, constructor: 'y' }] }, 'lines.0.constructor'],
      [{ email: 'a@b.example', priority: 1, lines: [], constructor: {} }, 'constructor'],
    ] as const) {
      for (const rejectUnknown of [true, false]) {
        const out: ParamViolation[] = [];
        expect(() => new DtoBinder(Order, rejectUnknown).bind(value as never, 'p', out)).not.toThrow();
        expect(out).toEqual([{ path: `p.${path}`, message: 'Parameter name not allowed', code: 'forbiddenKey' }]);
      }
    }
  });

  it('binds a valid plain object into an instance, nested ones too', () => {
    const out: ParamViolation[] = [];
    const order = new DtoBinder(Order, true).bind({ email: 'a@b.example', priority: 3, lines: [{ sku: 'x', qty: 2 }] }, '', out);
    expect(out).toEqual([]);
    expect(order).toBeInstanceOf(Order);
    expect(order.lines[0]).toBeInstanceOf(Line);
  });

  it('reports every violation with a dotted path and the constraint name as code', () => {
    const out: ParamViolation[] = [];
    new DtoBinder(Order, true).bind({ email: 'nope', priority: 11, lines: [{ sku: 'x', qty: 1 }, { sku: 3, qty: 0 }] }, '', out);
    expect(out).toEqual([
      { path: 'email', message: 'email must be an email', code: 'isEmail' },
      { path: 'priority', message: 'priority must not be greater than 10', code: 'max' },
      { path: 'lines.1.sku', message: 'sku must be a string', code: 'isString' },
      { path: 'lines.1.qty', message: 'qty must not be less than 1', code: 'min' },
    ]);
  });

  it('puts a prefix before every path (a DTO bound under a named param)', () => {
    const out: ParamViolation[] = [];
    new DtoBinder(Line, true).bind({ sku: 'x', qty: 0 }, 'line', out);
    expect(out).toEqual([{ path: 'line.qty', message: 'qty must not be less than 1', code: 'min' }]);
  });

  it('appends to what is already there', () => {
    const out: ParamViolation[] = [{ path: 'earlier', message: 'm', code: 'c' }];
    new DtoBinder(Line, true).bind({ sku: 1, qty: 1 }, '', out);
    expect(out.map((v) => v.path)).toEqual(['earlier', 'sku']);
  });

  it('rejectUnknown: unknown keys are "Unknown parameter" with code null, nested ones too', () => {
    const out: ParamViolation[] = [];
    new DtoBinder(Order, true).bind({ email: 'a@b.example', priority: 1, lines: [{ sku: 'x', qty: 1, colour: 'red' }], admin: true }, '', out);
    expect([...out].sort((x, y) => String(x.path).localeCompare(String(y.path)))).toEqual([
      { path: 'admin', message: 'Unknown parameter', code: null },
      { path: 'lines.0.colour', message: 'Unknown parameter', code: null },
    ]);
  });

  it('without rejectUnknown, unknown keys pass and stay on the instance', () => {
    const out: ParamViolation[] = [];
    const line = new DtoBinder(Line, false).bind({ sku: 'x', qty: 1, colour: 'red' }, '', out);
    expect(out).toEqual([]);
    expect((line as unknown as Record<string, unknown>).colour).toBe('red');
  });

  it('declaredProperties lists validated properties in declaration order, inherited ones included', () => {
    expect(new DtoBinder(Order, true).declaredProperties()).toEqual(['email', 'priority', 'lines', 'note']);
    expect(new DtoBinder(Derived, true).declaredProperties().sort()).toEqual(['id', 'version']);
  });

  it('an inherited DTO validates the base class properties too', () => {
    const out: ParamViolation[] = [];
    new DtoBinder(Derived, true).bind({ id: 5, version: 'x' }, '', out);
    expect(out.map((v) => [v.path, v.code]).sort()).toEqual([['id', 'isString'], ['version', 'isInt']]);
  });

  it('never reports the rejected value or the target in its output', () => {
    const out: ParamViolation[] = [];
    new DtoBinder(Line, true).bind({ sku: 'x', qty: -5 }, '', out);
    expect(Object.keys(out[0]).sort()).toEqual(['code', 'message', 'path']);
  });
});
