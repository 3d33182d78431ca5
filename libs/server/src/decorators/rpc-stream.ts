import { StreamFormat } from '@nest-jsonrpc/protocol';
import { RPC_STREAM_METADATA } from './metadata-keys.js';
import type { RpcJsonSchema } from './rpc-method.js';
import type { StandardSchemaV1 } from './standard-schema.js';

export { StreamFormat };

export interface RpcStreamOptions {
  /** Wire framing. Default `StreamFormat.Ndjson`. */
  format?: StreamFormat;
  /** A durable stream: started by `POST /rpc`, persisted, attachable and resumable. */
  durable?: boolean;
  /**
   * What one row looks like: a class (described like a DTO), a Standard Schema (described by its
   * output side; checked only under the module's `validateResults`) or a JSON Schema.
   */
  row?: (new (...args: any[]) => unknown) | StandardSchemaV1 | RpcJsonSchema;
  /** What discovery documents show for a Standard Schema `row` instead of its own JSON Schema. */
  jsonSchema?: { row?: RpcJsonSchema };
}

/**
 * Marks an `@RpcMethod` as a stream: the handler returns an AsyncIterable, an Iterable or an
 * Observable, and each value becomes one row.
 */
export function RpcStream(options: RpcStreamOptions = {}): MethodDecorator {
  return (_target, _key, descriptor) => {
    Reflect.defineMetadata(RPC_STREAM_METADATA, { ...options }, descriptor.value as object);
    return descriptor;
  };
}
