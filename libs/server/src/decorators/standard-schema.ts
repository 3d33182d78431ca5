/**
 * The Standard Schema v1 and Standard JSON Schema v1 interfaces, copied as their authors invite
 * libraries to: the published typings then need no `@standard-schema/spec` install (the package a
 * zod, Valibot or ArkType schema is typed against). `standard-schema.spec.ts` checks that the two
 * copies stay interchangeable. Types only, apart from the guards at the end.
 */

/** What the two specs share: the version, the vendor and the inferred types. */
export interface StandardTypedV1<Input = unknown, Output = Input> {
  readonly '~standard': StandardTypedV1.Props<Input, Output>;
}

// eslint-disable-next-line @typescript-eslint/no-namespace -- the spec's own shape
export declare namespace StandardTypedV1 {
  interface Props<Input = unknown, Output = Input> {
    readonly version: 1;
    readonly vendor: string;
    readonly types?: Types<Input, Output> | undefined;
  }
  interface Types<Input = unknown, Output = Input> {
    readonly input: Input;
    readonly output: Output;
  }
  type InferInput<Schema extends StandardTypedV1> = NonNullable<Schema['~standard']['types']>['input'];
  type InferOutput<Schema extends StandardTypedV1> = NonNullable<Schema['~standard']['types']>['output'];
}

/** A schema of any Standard Schema library (zod 4, Valibot 1, ArkType 2, …): anything with `~standard.validate`. */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': StandardSchemaV1.Props<Input, Output>;
}

// eslint-disable-next-line @typescript-eslint/no-namespace -- the spec's own shape (`StandardSchemaV1.InferOutput<S>`)
export declare namespace StandardSchemaV1 {
  interface Props<Input = unknown, Output = Input> extends StandardTypedV1.Props<Input, Output> {
    readonly validate: (value: unknown, options?: Options | undefined) => Result<Output> | Promise<Result<Output>>;
  }
  type Result<Output> = SuccessResult<Output> | FailureResult;
  interface SuccessResult<Output> {
    readonly value: Output;
    readonly issues?: undefined;
  }
  interface Options {
    readonly libraryOptions?: Record<string, unknown> | undefined;
  }
  interface FailureResult {
    readonly issues: ReadonlyArray<Issue>;
  }
  interface Issue {
    readonly message: string;
    readonly path?: ReadonlyArray<PropertyKey | PathSegment> | undefined;
  }
  interface PathSegment {
    readonly key: PropertyKey;
  }
  type InferInput<Schema extends StandardTypedV1> = StandardTypedV1.InferInput<Schema>;
  type InferOutput<Schema extends StandardTypedV1> = StandardTypedV1.InferOutput<Schema>;
}

/** A schema that can describe itself as JSON Schema (zod ≥ 4.2, ArkType ≥ 2.1.28, Valibot through `toStandardJsonSchema()`). */
export interface StandardJSONSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': StandardJSONSchemaV1.Props<Input, Output>;
}

// eslint-disable-next-line @typescript-eslint/no-namespace -- the spec's own shape
export declare namespace StandardJSONSchemaV1 {
  interface Props<Input = unknown, Output = Input> extends StandardTypedV1.Props<Input, Output> {
    readonly jsonSchema: Converter;
  }
  interface Converter {
    /** May throw when the schema has no JSON Schema equivalent (a zod transform on the output side). */
    readonly input: (options: Options) => Record<string, unknown>;
    readonly output: (options: Options) => Record<string, unknown>;
  }
  type Target = 'draft-2020-12' | 'draft-07' | 'openapi-3.0' | ({} & string);
  interface Options {
    readonly target: Target;
    readonly libraryOptions?: Record<string, unknown> | undefined;
  }
}

/**
 * What a handler receives from a schema: its output side, after coercions, defaults and
 * transforms. `p: RpcSchemaOutput<typeof CreateOrder>` stays in step with the schema.
 */
export type RpcSchemaOutput<Schema extends StandardSchemaV1> = StandardSchemaV1.InferOutput<Schema>;

/**
 * A Standard Schema, told apart from a JSON Schema literal (which never has `~standard`) and from
 * a DTO class. An ArkType schema is a function, so the check comes before any `typeof === 'function'`.
 */
export function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return false;
  const props = (value as { '~standard'?: unknown })['~standard'];
  return props !== null && typeof props === 'object' && typeof (props as { validate?: unknown }).validate === 'function';
}
