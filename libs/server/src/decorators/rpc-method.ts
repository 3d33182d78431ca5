import type { RolesMatch } from '../options/json-rpc-options.js';
import { RPC_METHOD_METADATA } from './metadata-keys.js';
import type { StandardSchemaV1 } from './standard-schema.js';

/** A JSON Schema (2020-12) given by hand, for what no DTO class describes. */
export type RpcJsonSchema = Record<string, unknown> | boolean;

/** An error a method may answer, for discovery documents. */
export interface RpcDeclaredError {
  code: number;
  message: string;
  data?: unknown;
}

/**
 * Marks the method that trades credentials for a token: after a successful call the explorer
 * offers to send `<header>: <scheme> <token>` with every request, the token read from the
 * result at `tokenPath`. Published in the OpenRPC document as the method's `x-sign-in`.
 */
export interface RpcSignInOptions {
  /** Dot-separated path of the token in the result. Default `token`. */
  tokenPath?: string;
  /** The request header that carries it. Default `Authorization`. */
  header?: string;
  /** Written before the token (`Bearer <token>`); `''` sends the token alone. Default `Bearer`. */
  scheme?: string;
}

/** How the explorer page treats the method. */
export interface RpcMethodExplorerOptions {
  /** This is the login method: `true` for the defaults (`token`, `Authorization`, `Bearer`). */
  signIn?: true | RpcSignInOptions;
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
  /**
   * The params object: a Standard Schema (zod, Valibot, ArkType, …) validates it before the
   * handler runs and describes it; the handler's params argument receives the schema's output.
   * A JSON Schema only describes params no DTO or `@RpcParam` describes.
   */
  params?: StandardSchemaV1 | RpcJsonSchema;
  /**
   * What the method returns: a class (described like a DTO), a Standard Schema (described by its
   * output side; checked only under the module's `validateResults`) or a JSON Schema. Default: anything.
   */
  result?: (new (...args: any[]) => unknown) | StandardSchemaV1 | RpcJsonSchema;
  /**
   * What discovery documents (OpenRPC, MCP, tools) show for a Standard Schema `params` or `result`,
   * instead of the JSON Schema the schema gives of itself: for a schema that has no JSON Schema
   * converter, or one the converter refuses (a zod transform on the output side).
   */
  jsonSchema?: { params?: RpcJsonSchema; result?: RpcJsonSchema };
  /** Errors the method may answer, besides those the module adds (-32602, -32001, -32003). */
  errors?: readonly RpcDeclaredError[];
  /** False leaves the method out of discovery documents (it stays callable). Default true. */
  discoverable?: boolean;
  /** How the explorer page treats the method (e.g. as the sign-in method). */
  explorer?: RpcMethodExplorerOptions;
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
