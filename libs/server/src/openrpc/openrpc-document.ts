import type { JsonSchema, JsonSchemaObject } from '../schema/index.js';

/** The OpenRPC version the documents declare (the newest `@open-rpc/meta-schema` validates). */
export const OPENRPC_VERSION = '1.3.2';

/** The parts of an OpenRPC 1.3.2 document this module writes. */
export interface OpenRpcDocument {
  readonly openrpc: typeof OPENRPC_VERSION;
  readonly info: OpenRpcInfo;
  readonly servers: readonly OpenRpcServer[];
  readonly methods: readonly OpenRpcMethod[];
  readonly components: { readonly schemas: Readonly<Record<string, JsonSchemaObject>> };
}

export interface OpenRpcInfo {
  readonly title: string;
  readonly version: string;
  readonly description?: string;
  readonly termsOfService?: string;
  readonly contact?: { readonly name?: string; readonly email?: string; readonly url?: string };
  readonly license?: { readonly name: string; readonly url?: string };
}

export interface OpenRpcServer {
  readonly name: string;
  /** Absolute (the meta-schema requires a URI: `/rpc` alone fails validation). */
  readonly url: string;
  readonly description?: string;
}

export interface OpenRpcContentDescriptor {
  readonly name: string;
  readonly required?: boolean;
  readonly schema: JsonSchema;
}

export interface OpenRpcError {
  readonly code: number;
  readonly message: string;
  readonly data?: unknown;
}

/** `x-stream`: the method answers rows on a stream route (the result schema is one row). */
export interface OpenRpcStreamExtension {
  /** The `StreamFormat` value: `ndjson`, `sse` or `json-array`. */
  readonly format: string;
  /** The route that serves it: the live stream path, or for durable streams the `/rpc` path that starts it. */
  readonly path: string;
  /** Durable: `POST <servers[0].url>` answers `{stream_id, sse_url, status}`, rows are `chunk` events at `sse_url`. */
  readonly durable: boolean;
  /** Durable only: the base path of the stream REST/SSE routes (`/rpc/streams`). */
  readonly streamsPath?: string;
}

/**
 * `x-sign-in`: the method trades credentials for a token (`@RpcMethod(name, { explorer: { signIn } })`).
 * A client sends `<header>: <scheme> <token>` (just the token when `scheme` is `''`), the token
 * read from the result at `tokenPath` (dot-separated).
 */
export interface OpenRpcSignInExtension {
  readonly tokenPath: string;
  readonly header: string;
  readonly scheme: string;
}

export interface OpenRpcMethod {
  readonly name: string;
  readonly summary?: string;
  readonly description?: string;
  readonly tags?: ReadonlyArray<{ readonly name: string }>;
  readonly paramStructure: 'by-name' | 'either';
  readonly params: readonly OpenRpcContentDescriptor[];
  readonly result: OpenRpcContentDescriptor;
  readonly errors?: readonly OpenRpcError[];
  readonly deprecated?: boolean;
  readonly 'x-stream'?: OpenRpcStreamExtension;
  readonly 'x-sign-in'?: OpenRpcSignInExtension;
}
