import { RPC_ARGS_METADATA } from './metadata-keys.js';

export type RpcArgKind = 'params' | 'param' | 'ctx';

export interface RpcParamOptions {
  /** The param may be absent; the argument is then `undefined` (or `default`). */
  optional?: boolean;
  /** Value used when the param is absent; implies `optional`. */
  default?: unknown;
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

/** The whole `params` value, transformed into the parameter's DTO class and validated. */
export function RpcParams(): ParameterDecorator {
  return (target, key, index) => addArg(target, key, { index, kind: 'params' });
}

/**
 * One named param. When `params` is an array, the i-th `@RpcParam` of the method takes item i.
 * Its declared type (number, string, boolean, array, or a DTO class) is checked.
 */
export function RpcParam(name: string, options: RpcParamOptions = {}): ParameterDecorator {
  return (target, key, index) => addArg(target, key, { index, kind: 'param', name, options });
}

/** The call's `RpcContext`. */
export function RpcCtx(): ParameterDecorator {
  return (target, key, index) => addArg(target, key, { index, kind: 'ctx' });
}
