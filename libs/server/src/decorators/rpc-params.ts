import { RPC_ARGS_METADATA } from './metadata-keys.js';
import type { RpcJsonSchema } from './rpc-method.js';
import type { StandardSchemaV1 } from './standard-schema.js';

export type RpcArgKind = 'params' | 'param' | 'ctx';

export interface RpcParamOptions {
  /** The param may be absent; the argument is then `undefined` (or `default`), and no schema runs. */
  optional?: boolean;
  /** Value used when the param is absent; implies `optional`. */
  default?: unknown;
  /**
   * A Standard Schema (zod, Valibot, ArkType, …) that validates this one value (an absent one
   * too, unless `optional`/`default` say otherwise) and describes it; the argument receives the
   * schema's output. The parameter's declared type is then not checked.
   */
  schema?: StandardSchemaV1;
  /** What discovery documents show for `schema` instead of the JSON Schema it gives of itself. */
  jsonSchema?: RpcJsonSchema;
}

export interface RpcParamsOptions {
  /**
   * A Standard Schema that validates the whole `params` value and describes it; the argument
   * receives the schema's output (as with `@RpcMethod(name, { params: schema })`).
   */
  schema?: StandardSchemaV1;
  /** What discovery documents show for `schema` instead of the JSON Schema it gives of itself. */
  jsonSchema?: RpcJsonSchema;
}

export interface RpcArgMetadata {
  readonly index: number;
  readonly kind: RpcArgKind;
  /** The JSON key, for `@RpcParam`. */
  readonly name?: string;
  readonly options?: RpcParamOptions;
}

function addArg(target: object, key: string | symbol | undefined, arg: RpcArgMetadata): void {
  if (key === undefined) throw new Error('RPC parameter decorators apply to method parameters only');
  const existing: RpcArgMetadata[] = Reflect.getMetadata(RPC_ARGS_METADATA, target.constructor, key) ?? [];
  Reflect.defineMetadata(RPC_ARGS_METADATA, [...existing, arg], target.constructor, key);
}

/**
 * The whole `params` value: validated by `schema` when one is given (the argument receives its
 * output), else transformed into the parameter's DTO class and validated.
 */
export function RpcParams(options: RpcParamsOptions = {}): ParameterDecorator {
  return (target, key, index) => addArg(target, key, { index, kind: 'params', options });
}

/**
 * One named param. When `params` is an array, the i-th `@RpcParam` of the method takes item i.
 * Its `schema` validates it; without one, its declared type (number, string, boolean, array, or a
 * DTO class) is checked.
 */
export function RpcParam(name: string, options: RpcParamOptions = {}): ParameterDecorator {
  return (target, key, index) => addArg(target, key, { index, kind: 'param', name, options });
}

/** The call's `RpcContext`. */
export function RpcCtx(): ParameterDecorator {
  return (target, key, index) => addArg(target, key, { index, kind: 'ctx' });
}
