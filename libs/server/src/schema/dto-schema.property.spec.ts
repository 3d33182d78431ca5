/**
 * The schemas say what validation enforces: for many DTO shapes, every value generated from a
 * DTO's schema passes the server's own binder (DtoBinder: class-transformer + class-validator,
 * rejectUnknown on), and every value with one constraint broken is refused.
 */
import 'reflect-metadata';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean, IsDateString, IsEmail, IsEnum, IsIn, IsInt, IsISO8601, IsNegative, IsNotEmpty, IsNumber,
  IsOptional, IsPositive, IsString, IsUrl, IsUUID, Length, Matches, Max, MaxLength, Min, MinLength, ValidateNested,
} from 'class-validator';
import fc from 'fast-check';
import { DtoBinder } from '../params/dto-binder.js';
import type { ParamViolation } from '../params/param-violation.js';
import { invalidObject, validValue } from './json-schema-arbitrary.spec-support.js';
import { MethodSchemaBuilder } from './method-schema-builder.js';

enum Status { Draft = 'draft', Live = 'live' }
enum Level { Low, Mid, High }

class Scalars {
  @IsString() name!: string;
  @IsNumber() ratio!: number;
  @IsBoolean() active!: boolean;
  @Min(0) @IsInt() count!: number;
}
class Bounded {
  @IsInt() @Min(-5) @Max(5) small!: number;
  @IsNumber() @IsPositive() positive!: number;
  @IsNegative() @IsNumber() negative!: number;
  @IsString() @MinLength(3) @MaxLength(8) word!: string;
  @Length(2, 4) @IsString() code!: string;
}
class Formats {
  @IsEmail() email!: string;
  @IsUrl() homepage!: string;
  @IsUUID() id!: string;
  @IsISO8601() at!: string;
  @IsDateString() since!: string;
  @Matches(/^[A-Z]{3}-[0-9]{2}$/) ticket!: string;
}
class Choices {
  @IsEnum(Status) status!: Status;
  @IsEnum(Level) level!: Level;
  @IsIn(['a', 'b', 'c']) letter!: string;
  @IsIn([1, 2, 3]) digit!: number;
  @IsNotEmpty() @IsString() required!: string;
}
class Optionals {
  @IsOptional() @IsString() @MaxLength(4) nickname?: string;
  @IsOptional() @IsInt() @Max(3) rank?: number;
  @IsOptional() @IsEnum(Status) status?: Status;
  @IsString() always!: string;
}
class Point { @IsNumber() x!: number; @IsNumber() y!: number; }
class Line {
  @ValidateNested() @Type(() => Point) from!: Point;
  @ValidateNested() @Type(() => Point) to!: Point;
  @IsOptional() @IsString() label?: string;
}
class Polygon {
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(4) @ValidateNested({ each: true }) @Type(() => Point) points!: Point[];
  @IsOptional() @ValidateNested() @Type(() => Line) axis?: Line;
  @IsString({ each: true }) tags!: string[];
}
class Category {
  @IsString() @MinLength(1) title!: string;
  @IsOptional() @ValidateNested({ each: true }) @Type(() => Category) children?: Category[];
}

const SHAPES = [Scalars, Bounded, Formats, Choices, Optionals, Line, Polygon, Category];

function bind(dtoClass: new () => object, value: unknown): ParamViolation[] {
  const out: ParamViolation[] = [];
  // Through JSON, as params arrive.
  new DtoBinder(dtoClass, true).bind(JSON.parse(JSON.stringify(value)), '', out);
  return out;
}

describe('DTO schemas agree with validation (fast-check)', () => {
  const builder = new MethodSchemaBuilder();
  const described = SHAPES.map((dtoClass) => ({
    dtoClass,
    schema: builder.describe(dtoClass.name, { params: { kind: 'dto', dtoClass, positional: false, rejectUnknown: true } }).params.schema,
  }));
  const components = builder.components();

  it('reports nothing for these shapes (every constraint is expressible)', () => {
    expect(builder.problems()).toEqual([]);
  });

  it.each(described.map((d) => [d.dtoClass.name, d] as const))('%s: values generated from the schema pass DtoBinder', (_name, { dtoClass, schema }) => {
    fc.assert(
      fc.property(validValue(schema, components), (value) => {
        expect(bind(dtoClass, value)).toEqual([]);
      }),
      { numRuns: 150 },
    );
  });

  it.each(described.map((d) => [d.dtoClass.name, d] as const))('%s: values with one constraint broken are refused', (_name, { dtoClass, schema }) => {
    fc.assert(
      fc.property(invalidObject(schema, components), ({ value, broke }) => {
        const violations = bind(dtoClass, value);
        if (violations.length === 0) throw new Error(`accepted although ${broke}: ${JSON.stringify(value)}`);
      }),
      { numRuns: 150 },
    );
  });
});
