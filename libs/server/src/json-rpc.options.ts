import type { FastifyRequest } from 'fastify';
import { MAX_TIMER_DELAY_MS } from './timer-delay.js';
import { resolveDurableOptions, type JsonRpcDurableOptions, type ResolvedDurableOptions } from './durable/durable-options.js';

export type RolesMatch = 'any' | 'all';

export interface JsonRpcSecurityOptions {
  /** How a method's `roles` are matched when the method does not say: any one of them, or all. */
  rolesMatch?: RolesMatch;
  /** Who is calling, as roles. Default: `request.user.roles`. */
  rolesResolver?: (request: FastifyRequest) => readonly string[] | undefined;
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
   * Who is calling, as one stable string, for `scope: 'user'` of rate limits and caches.
   * Default: `request.user.id`, else `.sub`, else `.username`. Undefined means anonymous.
   */
  userIdResolver?: (request: FastifyRequest) => string | number | undefined;
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
   * Headers of every stream response, merged over the defaults (`Cache-Control: no-cache`,
   * `X-Accel-Buffering: no`, `X-Content-Type-Options: nosniff`); `null` removes a default.
   */
  headers?: Record<string, string | null>;
}

/** Headers every stream carries unless `stream.headers` says otherwise. */
export const DEFAULT_STREAM_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'cache-control': 'no-cache',
  'x-accel-buffering': 'no',
  'x-content-type-options': 'nosniff',
});

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
}

export interface JsonRpcModuleAsyncOptions {
  imports?: any[];
  inject?: any[];
  useFactory: (...args: any[]) => JsonRpcModuleOptions | Promise<JsonRpcModuleOptions>;
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
    readonly rolesResolver?: (request: FastifyRequest) => readonly string[] | undefined;
    readonly exposeRoleNames: boolean;
    readonly defaultRoles: readonly string[];
    readonly publicMethods: readonly string[];
    readonly publicPrefixes: readonly string[];
    readonly prefixRoles: Readonly<Record<string, readonly string[]>>;
    readonly userIdResolver?: (request: FastifyRequest) => string | number | undefined;
  };
  readonly durable: ResolvedDurableOptions;
  readonly redis: { readonly url: string; readonly keyPrefix: string } | undefined;
}

export const JSON_RPC_MODULE_OPTIONS = Symbol('JSON_RPC_MODULE_OPTIONS');

const KNOWN_KEYS: Record<string, readonly string[]> = {
  '': ['path', 'stream', 'httpStatus', 'maxRequestSize', 'maxBatchSize', 'batchConcurrency', 'params', 'security', 'durable', 'redis'],
  stream: ['enabled', 'path', 'keepAliveMs', 'headers'],
  httpStatus: ['enabled'],
  params: ['rejectUnknown'],
  security: [
    'rolesMatch',
    'rolesResolver',
    'exposeRoleNames',
    'defaultRoles',
    'publicMethods',
    'publicPrefixes',
    'prefixRoles',
    'userIdResolver',
  ],
  redis: ['url', 'keyPrefix'],
};


/**
 * Fills defaults and rejects what we do not understand, all problems in one error: a typo in an
 * option name must not silently fall back to a default.
 */
export function resolveJsonRpcOptions(options: JsonRpcModuleOptions = {}): ResolvedJsonRpcOptions {
  const problems: string[] = [];
  const checkKeys = (section: string, value: unknown) => {
    if (value === undefined) return;
    if (value === null || typeof value !== 'object') {
      problems.push(`"${section}" must be an object`);
      return;
    }
    for (const key of Object.keys(value)) {
      if (!KNOWN_KEYS[section].includes(key)) problems.push(`unknown option "${section ? `${section}.` : ''}${key}"`);
    }
  };
  checkKeys('', options);
  for (const section of ['stream', 'httpStatus', 'params', 'security', 'redis'] as const) checkKeys(section, options[section]);

  const path = options.path ?? '/rpc';
  const streamPath = options.stream?.path ?? '/rpc/stream';
  for (const [name, value] of [['path', path], ['stream.path', streamPath]] as const) {
    if (typeof value !== 'string' || !value.startsWith('/')) problems.push(`"${name}" must be a string starting with "/"`);
  }
  const integer = (name: string, value: number, min: number) => {
    if (!Number.isInteger(value) || value < min) problems.push(`"${name}" must be an integer >= ${min}, got ${String(value)}`);
  };
  const maxRequestSize = options.maxRequestSize ?? 1_048_576;
  const maxBatchSize = options.maxBatchSize ?? 100;
  const batchConcurrency = options.batchConcurrency ?? 16;
  integer('maxRequestSize', maxRequestSize, 0);
  integer('maxBatchSize', maxBatchSize, 1);
  integer('batchConcurrency', batchConcurrency, 1);
  const rolesMatch = options.security?.rolesMatch ?? 'any';
  if (rolesMatch !== 'any' && rolesMatch !== 'all') problems.push(`"security.rolesMatch" must be "any" or "all", got ${JSON.stringify(rolesMatch)}`);
  const rolesResolver = options.security?.rolesResolver;
  if (rolesResolver !== undefined && typeof rolesResolver !== 'function') problems.push('"security.rolesResolver" must be a function');
  const security = resolveSecurityLists(options.security, problems);
  const redis = resolveRedis(options.redis, problems);
  for (const [name, value] of [
    ['security.exposeRoleNames', options.security?.exposeRoleNames],
    ['stream.enabled', options.stream?.enabled],
    ['httpStatus.enabled', options.httpStatus?.enabled],
    ['params.rejectUnknown', options.params?.rejectUnknown],
  ] as const) {
    if (value !== undefined && typeof value !== 'boolean') problems.push(`"${name}" must be a boolean`);
  }
  const keepAliveMs = options.stream?.keepAliveMs ?? 15_000;
  integer('stream.keepAliveMs', keepAliveMs, 0);
  // Node timers clamp longer delays to 1 ms: a "practically never" value would flood comments.
  if (keepAliveMs > MAX_TIMER_DELAY_MS) problems.push(`"stream.keepAliveMs" must be at most ${MAX_TIMER_DELAY_MS} (about 24.8 days), got ${keepAliveMs}`);
  const streamHeaders = resolveStreamHeaders(options.stream?.headers, problems);
  if (options.stream?.enabled && streamPath === path) problems.push(`"stream.path" must differ from "path" (both are "${path}")`);
  const durable = resolveDurableOptions(options.durable, problems);
  if (problems.length) {
    throw new Error(`JsonRpcModule: invalid options:\n  - ${problems.join('\n  - ')}`);
  }
  return deepFreeze({
    path,
    stream: { enabled: options.stream?.enabled ?? false, path: streamPath, keepAliveMs, headers: streamHeaders },
    httpStatus: { enabled: options.httpStatus?.enabled ?? false },
    maxRequestSize,
    maxBatchSize,
    batchConcurrency,
    params: { rejectUnknown: options.params?.rejectUnknown ?? true },
    security: { rolesMatch, rolesResolver, ...security },
    durable,
    redis,
  });
}

/** Header names are tokens; values must not carry line breaks (response splitting). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const UNSAFE_HEADER_VALUE = /[\r\n\0]/;

function resolveStreamHeaders(headers: JsonRpcStreamOptions['headers'], problems: string[]): Record<string, string> {
  const resolved: Record<string, string> = { ...DEFAULT_STREAM_HEADERS };
  if (headers === undefined) return resolved;
  if (headers === null || typeof headers !== 'object' || Array.isArray(headers)) {
    problems.push('"stream.headers" must be an object of header name -> string (or null to remove a default)');
    return resolved;
  }
  for (const [name, value] of Object.entries(headers)) {
    const key = name.toLowerCase();
    if (!HEADER_NAME.test(name)) problems.push(`"stream.headers": invalid header name ${JSON.stringify(name)}`);
    else if (key === 'content-type' || key === 'content-length' || key === 'transfer-encoding') {
      problems.push(`"stream.headers": "${name}" is set by the stream format and cannot be configured`);
    } else if (value === null) delete resolved[key];
    else if (typeof value !== 'string' || UNSAFE_HEADER_VALUE.test(value)) {
      problems.push(`"stream.headers.${name}" must be a string without line breaks, or null`);
    } else resolved[key] = value;
  }
  return resolved;
}

function isRoleList(value: unknown): value is readonly string[] {
  return Array.isArray(value) && value.every((r) => typeof r === 'string' && r.length > 0);
}

function resolveSecurityLists(security: JsonRpcSecurityOptions | undefined, problems: string[]) {
  const list = (name: 'defaultRoles' | 'publicMethods' | 'publicPrefixes'): readonly string[] => {
    const value = security?.[name];
    if (value === undefined) return [];
    if (!isRoleList(value)) {
      problems.push(`"security.${name}" must be an array of non-empty strings`);
      return [];
    }
    return [...value];
  };
  const prefixRoles: Record<string, readonly string[]> = {};
  const given = security?.prefixRoles;
  if (given !== undefined) {
    if (given === null || typeof given !== 'object' || Array.isArray(given)) problems.push('"security.prefixRoles" must be an object of prefix -> roles');
    else {
      for (const [prefix, roles] of Object.entries(given)) {
        if (prefix.length === 0) problems.push('"security.prefixRoles" has an empty prefix');
        else if (!isRoleList(roles) || roles.length === 0) problems.push(`"security.prefixRoles['${prefix}']" must be a non-empty array of non-empty strings`);
        else prefixRoles[prefix] = [...roles];
      }
    }
  }
  const userIdResolver = security?.userIdResolver;
  if (userIdResolver !== undefined && typeof userIdResolver !== 'function') problems.push('"security.userIdResolver" must be a function');
  return {
    exposeRoleNames: security?.exposeRoleNames ?? true,
    defaultRoles: list('defaultRoles'),
    publicMethods: list('publicMethods'),
    publicPrefixes: list('publicPrefixes'),
    prefixRoles,
    userIdResolver,
  };
}

function resolveRedis(redis: JsonRpcRedisOptions | undefined, problems: string[]) {
  if (redis === undefined || redis === null || typeof redis !== 'object') return undefined;
  if (typeof redis.url !== 'string' || !/^rediss?:\/\//.test(redis.url)) {
    problems.push('"redis.url" must be a redis:// or rediss:// URL');
  }
  const keyPrefix = redis.keyPrefix ?? 'nest-jsonrpc:';
  if (typeof keyPrefix !== 'string') problems.push('"redis.keyPrefix" must be a string');
  return { url: redis.url, keyPrefix };
}

function deepFreeze<T extends object>(value: T): T {
  // Plain data only: option values that are instances (a store, a client) stay usable.
  for (const v of Object.values(value)) if (v && typeof v === 'object' && isPlainData(v)) deepFreeze(v);
  return Object.freeze(value);
}

function isPlainData(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null || Array.isArray(value);
}
