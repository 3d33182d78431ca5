import type { Type } from '@nestjs/common';
import type { RpcExceptionMapper } from '../errors/rpc-exception-mapper.js';
import type { JsonRpcDurableOptions, ResolvedDurableOptions } from './durable-options.js';
import type { JsonRpcMcpOptions, ResolvedMcpOptions } from './mcp-options.js';
import type { JsonRpcExplorerOptions, JsonRpcOpenRpcOptions, ResolvedExplorerOptions, ResolvedOpenRpcOptions } from './openrpc-options.js';
import type { JsonRpcLimitsOptions, ResolvedLimitsOptions } from './limits-options.js';
import type { JsonRpcRateLimitOptions, JsonRpcRateLimitPolicy } from './rate-limit-options.js';
import type { JsonRpcObservabilityOptions, ResolvedObservabilityOptions } from './observability-options.js';

export type RolesMatch = 'any' | 'all';

/**
 * Who is calling, as roles. `request` is the platform's request — Fastify's `FastifyRequest` or
 * Express's `Request` — as the app's guards see it (`request.user`, headers...).
 */
export type RolesResolver = (request: any) => readonly string[] | undefined;
/** Who is calling, as one stable id. `request`: the platform's request, as for `RolesResolver`. */
export type UserIdResolver = (request: any) => string | number | undefined;

export interface JsonRpcSecurityOptions {
  /** How a method's `roles` are matched when the method does not say: any one of them, or all. */
  rolesMatch?: RolesMatch;
  /** Who is calling, as roles. Default: `request.user.roles`. */
  rolesResolver?: RolesResolver;
  /** Name the missing roles in the -32001 message (default true); false answers `Access denied`. */
  exposeRoleNames?: boolean;
  /** Roles of every method that gets none from its own options, `publicMethods`, `publicPrefixes` or `prefixRoles`. */
  defaultRoles?: readonly string[];
  /** Methods open to everyone even when `defaultRoles` is set. */
  publicMethods?: readonly string[];
  /** Method-name prefixes open to everyone even when `defaultRoles` is set (`'health.'`). */
  publicPrefixes?: readonly string[];
  /** Roles per method-name prefix (`{ 'admin.': ['admin'] }`); the longest matching prefix wins. */
  prefixRoles?: Readonly<Record<string, readonly string[]>>;
  /**
   * Who is calling, as one stable string, for `scope: 'user'` of rate limits and caches and for
   * durable stream ownership. Default: `request.user.id`, else `.sub`, else `.username`.
   * Undefined means anonymous.
   */
  userIdResolver?: UserIdResolver;
}

/** Where rate-limit counters and cached results live when several instances serve one API. */
export interface JsonRpcRedisOptions {
  /** `redis://host:port/db` (or `rediss://`): one Redis node. Either this or `cluster`. */
  url?: string;
  /**
   * A Redis Cluster: `{ nodes: ['redis://10.0.0.1:6379', ...] }`, some of its nodes (the rest are
   * discovered). Credentials and TLS (`rediss://`) are taken from the first URL.
   */
  cluster?: { nodes: readonly string[] };
  /** Prefix of every key written (default `nest-jsonrpc:`), so apps can share one Redis. */
  keyPrefix?: string;
}

/** The `redis` option, resolved: one node or a cluster. */
export type ResolvedRedisOptions =
  | { readonly url: string; readonly cluster?: undefined; readonly keyPrefix: string }
  | { readonly url?: undefined; readonly cluster: { readonly nodes: readonly string[] }; readonly keyPrefix: string };

export interface JsonRpcStreamOptions {
  enabled?: boolean;
  path?: string;
  /**
   * Milliseconds of silence after which an SSE response — a live stream or a durable attach — gets
   * a `:` comment; 0 = never. Default 15000.
   */
  keepAliveMs?: number;
  /**
   * Headers of every stream response (live and durable attach), merged over the defaults
   * (`Cache-Control: no-cache`, `X-Accel-Buffering: no`, `X-Content-Type-Options: nosniff`);
   * `null` removes a default.
   */
  headers?: Record<string, string | null>;
}

export interface JsonRpcModuleOptions {
  /**
   * Route of the JSON-RPC endpoint. Default `/rpc`. The stream, durable, OpenRPC and explorer
   * routes default below it (`<path>/stream`, `<path>/streams`, `<path>/openrpc.json`,
   * `<path>/explorer`); `mcp.path` does not.
   */
  path?: string;
  /** The streaming endpoint. Default `{ enabled: false, path: '<path>/stream' }` (`/rpc/stream`). */
  stream?: JsonRpcStreamOptions;
  /** Map error codes to HTTP statuses instead of answering 200. Default `{ enabled: false }`. */
  httpStatus?: { enabled?: boolean };
  /** Largest accepted body in bytes, counted inflated for a compressed body (and on the wire); 0 turns the limit off. Default 1 MiB. */
  maxRequestSize?: number;
  /** Most items in one batch. Default 100. */
  maxBatchSize?: number;
  /** Most batch items running at once for one HTTP request. Default 16. */
  batchConcurrency?: number;
  /**
   * Params handling. `rejectUnknown` (default true) answers -32602 for keys no parameter claims:
   * DTOs and `@RpcParam` lists; a Standard Schema decides about unknown keys itself.
   */
  params?: { rejectUnknown?: boolean };
  /**
   * Check what handlers return against a Standard Schema `result` (`@RpcMethod`) or `row`
   * (`@RpcStream`), and send the schema's output. A value that fails answers -32603 (a stream
   * ends with a -32603 error row) and is logged. Default false: results and rows are described
   * by their schemas but sent as the handler returns them.
   */
  validateResults?: boolean;
  security?: JsonRpcSecurityOptions;
  /** Durable streams (started by `POST <path>`, attached at `GET <durable.path>/:id`). Default off. */
  durable?: JsonRpcDurableOptions;
  /** Put `@RpcRateLimit` counters and the `@RpcCache` store in Redis, shared by every instance. */
  redis?: JsonRpcRedisOptions;
  /**
   * A subclass of `RpcExceptionMapper` that maps what calls throw to error objects, on every
   * transport. Created with dependency injection (it may inject global providers).
   */
  exceptionMapper?: Type<RpcExceptionMapper>;
  /** Chosen methods as MCP tools on `POST <mcp.path>` (Streamable HTTP). Default off. */
  mcp?: JsonRpcMcpOptions;
  /** The OpenRPC document: `rpc.discover` on `path` and `GET <openrpc.path>`. Default off. */
  openrpc?: JsonRpcOpenRpcOptions;
  /** The browser explorer page on `GET <explorer.path>` (needs `openrpc`). Default off. */
  explorer?: JsonRpcExplorerOptions;
  /** Bounds on slow and oversize clients: lingering close after an early 413, stalled stream readers. See docs/limits.md. */
  limits?: JsonRpcLimitsOptions;
  /**
   * The rate limit of every method without its own `@RpcRateLimit` (and not lifted by
   * `@SkipThrottle({ rpc: true })`): `{ limit, interval, scope?, blockDuration?, onStoreError? }`,
   * counted per method exactly as if each carried `@RpcRateLimit` with these options. Default:
   * none. `{ onStoreError }` alone sets what every limit does while the `redis` option's Redis is
   * unreachable, without a default limit.
   */
  rateLimit?: JsonRpcRateLimitOptions | JsonRpcRateLimitPolicy;
  /** Spans, metrics, events and call logs. Default `{ tracing: true, metrics: true, events: true, logCalls: 'errors' }`. */
  observability?: JsonRpcObservabilityOptions;
}

/** What `forRootAsync({ useClass | useExisting })` instantiates: `createJsonRpcOptions()` gives the options. */
export interface JsonRpcOptionsFactory {
  createJsonRpcOptions(): JsonRpcModuleOptions | Promise<JsonRpcModuleOptions>;
}

/** Options with every default filled in; frozen at startup. */
export interface ResolvedJsonRpcOptions {
  readonly path: string;
  readonly stream: {
    readonly enabled: boolean;
    readonly path: string;
    readonly keepAliveMs: number;
    /** Final header set (lower-case names), defaults merged. */
    readonly headers: Readonly<Record<string, string>>;
  };
  readonly httpStatus: { readonly enabled: boolean };
  readonly maxRequestSize: number;
  readonly maxBatchSize: number;
  readonly batchConcurrency: number;
  readonly params: { readonly rejectUnknown: boolean };
  readonly validateResults: boolean;
  readonly security: {
    readonly rolesMatch: RolesMatch;
    readonly rolesResolver?: RolesResolver;
    readonly exposeRoleNames: boolean;
    readonly defaultRoles: readonly string[];
    readonly publicMethods: readonly string[];
    readonly publicPrefixes: readonly string[];
    readonly prefixRoles: Readonly<Record<string, readonly string[]>>;
    readonly userIdResolver?: UserIdResolver;
  };
  readonly durable: ResolvedDurableOptions;
  readonly redis: ResolvedRedisOptions | undefined;
  readonly exceptionMapper: Type<RpcExceptionMapper>;
  readonly mcp: ResolvedMcpOptions;
  readonly openrpc: ResolvedOpenRpcOptions;
  readonly explorer: ResolvedExplorerOptions;
  readonly limits: ResolvedLimitsOptions;
  readonly rateLimit: Readonly<JsonRpcRateLimitOptions> | undefined;
  /** `rateLimit.onStoreError`, default `'allow'`: for every limit that does not set its own. */
  readonly rateLimitOnStoreError: 'allow' | 'deny';
  readonly observability: ResolvedObservabilityOptions;
}

export const JSON_RPC_MODULE_OPTIONS = Symbol('JSON_RPC_MODULE_OPTIONS');
