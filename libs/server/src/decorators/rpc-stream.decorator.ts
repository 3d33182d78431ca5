import { RPC_STREAM_METADATA } from './metadata-keys.js';

/** How a stream's rows are framed on the wire (DESIGN §4). */
export enum StreamFormat {
  Ndjson = 'ndjson',
  Sse = 'sse',
  JsonArray = 'json-array',
}

export interface RpcStreamOptions {
  /** Wire framing. Default `StreamFormat.Ndjson`. */
  format?: StreamFormat;
  /** A durable stream: started by `POST /rpc`, persisted, attachable and resumable. */
  durable?: boolean;
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
