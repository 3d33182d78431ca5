import { RPC_METHOD_METADATA } from './metadata-keys.js';
import type { RolesMatch } from '../json-rpc.options.js';

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
