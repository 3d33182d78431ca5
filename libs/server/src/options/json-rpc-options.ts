import type { Type } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { RpcExceptionMapper } from '../errors/rpc-exception-mapper.js';
import type { JsonRpcDurableOptions, ResolvedDurableOptions } from './durable-options.js';
import type { JsonRpcMcpOptions, ResolvedMcpOptions } from './mcp-options.js';
import type { JsonRpcExplorerOptions, JsonRpcOpenRpcOptions, ResolvedExplorerOptions, ResolvedOpenRpcOptions } from './openrpc-options.js';
import type { JsonRpcLimitsOptions, ResolvedLimitsOptions } from './limits-options.js';
import type { JsonRpcRateLimitOptions } from './rate-limit-options.js';
import type { JsonRpcObservabilityOptions, ResolvedObservabilityOptions } from './observability-options.js';

export type RolesMatch = 'any' | 'all';

export type RolesResolver = (request: FastifyRequest) => readonly string[] | undefined;
export type UserIdResolver = (request: FastifyRequest) => string | number | undefined;

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
  /** `redis://host:port/db`. */
  url: string;
  /** Prefix of every key written (default `nest-jsonrpc:`), so apps can share one Redis. */
  keyPrefix?: string;
}

export interface JsonRpcStreamOptions {
  enabled?: boolean;
  path?: string;
  /** Milliseconds of silence after which an SSE stream sends a `:` comment; 0 = never. Default 15000. */
  keepAliveMs?: number;
  /**
   * Headers of every stream response (live and durable attach), merged over the defaults
   * (`Cache-Control: no-cache`, `X-Accel-Buffering: no`, `X-Content-Type-Options: nosniff`);
   * `null` removes a default.
   */
  headers?: Record<string, string | null>;
}

export interface JsonRpcModuleOptions {
  /** Route of the JSON-RPC endpoint. Default `/rpc`. */
  path?: string;
  /** The streaming endpoint. Default `{ enabled: false, path: '/rpc/stream' }`. */
  stream?: JsonRpcStreamOptions;
  /** Map error codes to HTTP statuses instead of answering 200. Default `{ enabled: false }`. */
  httpStatus?: { enabled?: boolean };
  /** Largest accepted body in bytes; 0 turns the limit off. Default 1 MiB. */
  maxRequestSize?: number;
  /** Most items in one batch. Default 100. */
  maxBatchSize?: number;
  /** Most batch items running at once for one HTTP request. Default 16. */
  batchConcurrency?: number;
  /** Params handling. `rejectUnknown` (default true) answers -32602 for keys no parameter claims. */
  params?: { rejectUnknown?: boolean };
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
   * `@SkipThrottle({ rpc: true })`): `{ limit, interval, scope?, blockDuration? }`, counted per
   * method exactly as if each carried `@RpcRateLimit` with these options. Default: none.
   */
  rateLimit?: JsonRpcRateLimitOptions;
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
  readonly redis: { readonly url: string; readonly keyPrefix: string } | undefined;
  readonly exceptionMapper: Type<RpcExceptionMapper>;
  readonly mcp: ResolvedMcpOptions;
  readonly openrpc: ResolvedOpenRpcOptions;
  readonly explorer: ResolvedExplorerOptions;
  readonly limits: ResolvedLimitsOptions;
  readonly rateLimit: Readonly<JsonRpcRateLimitOptions> | undefined;
  readonly observability: ResolvedObservabilityOptions;
}

export const JSON_RPC_MODULE_OPTIONS = Symbol('JSON_RPC_MODULE_OPTIONS');
