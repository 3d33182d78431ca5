import type { RolesMatch } from '../options/json-rpc-options.js';
import { RPC_METHOD_METADATA } from './metadata-keys.js';

/** A JSON Schema (2020-12) given by hand, for what no DTO class describes. */
export type RpcJsonSchema = Record<string, unknown> | boolean;

/** An error a method may answer, for discovery documents. */
export interface RpcDeclaredError {
  code: number;
  message: string;
  data?: unknown;
}

export interface RpcMethodOptions {
  /** Roles the caller needs; checked before anything else runs. */
  roles?: readonly string[];
  /** Whether the caller needs any one of `roles` or all of them. Default: the module's `security.rolesMatch`. */
  rolesMatch?: RolesMatch;
  /** Let a DTO method take positional params: array items map onto the DTO's properties in declaration order. */
  allowPositional?: boolean;
  /** Override the module's `params.rejectUnknown` for this method. */
  rejectUnknown?: boolean;
  /** Mark the method deprecated: `true`, or the reason sent in `X-Rpc-Deprecated`. */
  deprecated?: boolean | string;
  /** Free text for discovery documents. */
  description?: string;
  /** One line for discovery documents and tool lists. */
  summary?: string;
  /** Groups in discovery documents and the explorer. */
  tags?: readonly string[];
  /** The params' JSON Schema, for params no DTO or `@RpcParam` describes. */
  params?: RpcJsonSchema;
  /** What the method returns: a class (described like a DTO) or a JSON Schema. Default: anything. */
  result?: (new (...args: any[]) => unknown) | RpcJsonSchema;
  /** Errors the method may answer, besides those the module adds (-32602, -32001, -32003). */
  errors?: readonly RpcDeclaredError[];
  /** False leaves the method out of discovery documents (it stays callable). Default true. */
  discoverable?: boolean;
}

export interface RpcMethodMetadata {
  readonly name: string;
  readonly options: RpcMethodOptions;
}

/**
 * Exposes a provider or controller method as the JSON-RPC method `name`.
 * Undecorated handler parameters receive `(params, ctx)`.
 */
export function RpcMethod(name: string, options: RpcMethodOptions = {}): MethodDecorator {
  return (_target, _key, descriptor) => {
    Reflect.defineMetadata(RPC_METHOD_METADATA, { name, options } satisfies RpcMethodMetadata, descriptor.value as object);
    return descriptor;
  };
}
