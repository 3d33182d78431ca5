import { DEFAULT_PATHS } from '@nest-jsonrpc/protocol';
import { RpcExceptionMapper } from '../errors/rpc-exception-mapper.js';
import { durableSection } from './durable-options.js';
import type { JsonRpcModuleOptions, ResolvedJsonRpcOptions } from './json-rpc-options.js';
import { limitsSection } from './limits-options.js';
import { mcpSection, resolveMcpOptions } from './mcp-options.js';
import { observabilitySection } from './observability-options.js';
import { check, OptionProblems } from './option-checks.js';
import { OptionSection, type OptionRow } from './option-section.js';
import { checkOpenRpcRoutes, explorerSection, openRpcSection } from './openrpc-options.js';
import { resolveRateLimitOptions } from './rate-limit-options.js';
import { resolveRedisOptions } from './redis-options.js';
import { securitySection } from './security-options.js';
import { streamSection } from './stream-options.js';

const httpStatusSection = new OptionSection<NonNullable<JsonRpcModuleOptions['httpStatus']>, ResolvedJsonRpcOptions['httpStatus']>('httpStatus', {
  enabled: { default: false, check: check.boolean, doc: 'map error codes to HTTP statuses (table below)' },
});

const paramsSection = new OptionSection<NonNullable<JsonRpcModuleOptions['params']>, ResolvedJsonRpcOptions['params']>('params', {
  rejectUnknown: {
    default: true,
    check: check.boolean,
    doc: 'keys no parameter claims are an error (-32602): DTOs and `@RpcParam` lists; a Standard Schema decides itself ([docs/schemas.md](docs/schemas.md#unknown-keys-absent-params-arrays))',
  },
});

/**
 * The options that are objects of their own, in the order their problems are reported. A key of
 * `JsonRpcModuleOptions` is either here or in `rootSection` (the compiler checks both ways).
 */
const SECTIONS = {
  security: securitySection,
  stream: streamSection,
  httpStatus: httpStatusSection,
  params: paramsSection,
  durable: durableSection,
  limits: limitsSection,
  mcp: mcpSection,
  observability: observabilitySection,
  openrpc: openRpcSection,
  explorer: explorerSection,
} satisfies { [K in keyof JsonRpcModuleOptions]?: OptionSection<NonNullable<JsonRpcModuleOptions[K]>, ResolvedJsonRpcOptions[K]> };

type SectionName = keyof typeof SECTIONS;
type RootName = Exclude<keyof JsonRpcModuleOptions, SectionName>;
type RootResolved = Pick<ResolvedJsonRpcOptions, Exclude<RootName, 'rateLimit'>> & { rateLimit: ReturnType<typeof resolveRateLimitOptions> };

/** The top-level options that are not sections. */
const rootSection = new OptionSection<Pick<JsonRpcModuleOptions, RootName>, RootResolved>('', {
  path: {
    default: DEFAULT_PATHS.rpc,
    check: check.routePath,
    doc: "route of the endpoint; absolute (Nest's global prefix does not apply — but it moves Nest middleware off the module's routes: [docs/platforms.md](docs/platforms.md)). `stream.path`, `durable.path`, `openrpc.path` and `explorer.path` default below it; `mcp.path` does not (an MCP client is given its full URL)",
  },
  maxRequestSize: { default: 1_048_576, check: check.integer(0), doc: 'largest body in bytes, counted inflated for a compressed one (and on the wire); `0` turns the limit off' },
  maxBatchSize: { default: 100, check: check.integer(1), doc: 'most items in one batch' },
  batchConcurrency: { default: 16, check: check.integer(1), doc: 'most items of one batch running at once' },
  validateResults: {
    default: false,
    check: check.boolean,
    doc: 'check what handlers return against a Standard Schema `result` / `row` and send its output; a failure is -32603, logged ([docs/schemas.md](docs/schemas.md#results-and-rows-validateresults))',
  },
  exceptionMapper: {
    default: RpcExceptionMapper,
    shown: '`RpcExceptionMapper`',
    check: (problems, label, mapper) => {
      if (typeof mapper !== 'function' || !(mapper === RpcExceptionMapper || (mapper as { prototype: unknown }).prototype instanceof RpcExceptionMapper)) {
        problems.push(`${label} must be a class that extends RpcExceptionMapper`);
      }
    },
    doc: 'a subclass mapping what calls throw to error objects, on every transport; created with dependency injection',
  },
  redis: {
    resolve: (redis, _label, problems) => resolveRedisOptions(redis as JsonRpcModuleOptions['redis'], problems),
    doc: '`{ url, keyPrefix? }` or `{ cluster: { nodes: [url, …] }, keyPrefix? }`: rate-limit counters and the result cache in Redis (or a Redis Cluster), shared by every instance',
  },
  rateLimit: {
    resolve: (rateLimit, _label, problems) => resolveRateLimitOptions(rateLimit as JsonRpcModuleOptions['rateLimit'], problems),
    doc: "`{ limit, interval, scope?, blockDuration?, onStoreError? }`: the rate limit of every method without its own `@RpcRateLimit`, counted per method ([docs/security.md](docs/security.md#a-default-for-every-method)); `onStoreError: 'allow' \\| 'deny'` (default `'allow'`, also alone): what limited calls do while the `redis` option's Redis is unreachable",
  },
});

const TOP_LEVEL_KEYS = [...rootSection.keys, ...Object.keys(SECTIONS)];

/** The README's options table, in its order (`npm run docs:options` writes it). */
export function optionRows(): OptionRow[] {
  const order: SectionName[] = ['params', 'httpStatus', 'security', 'stream', 'durable', 'openrpc', 'explorer', 'limits', 'mcp', 'observability'];
  return [...rootSection.rows(), ...order.flatMap((name) => SECTIONS[name].rows())];
}

/**
 * Fills defaults and rejects what we do not understand, every problem in one error: a typo in an
 * option name must not silently fall back to a default. Each section resolves from its table.
 */
export function resolveJsonRpcOptions(options: JsonRpcModuleOptions = {}): ResolvedJsonRpcOptions {
  const problems = new OptionProblems();
  // Unknown names first, all sections: they are the likeliest mistake and explain later problems.
  const readable = problems.object('options', options, TOP_LEVEL_KEYS, (key) => `unknown option "${key}"`);
  const given = (readable ? options : {}) as JsonRpcModuleOptions;
  const sectionReadable = Object.fromEntries(Object.entries(SECTIONS).map(([name, section]) => [name, section.checkKeys(given[name as SectionName], problems)]));
  const root = rootSection.resolve(given, problems);
  // The routes of the module's family (`stream`, `durable`, `openrpc`, `explorer`) default below
  // `path` (`belowPath` in their tables); below an invalid `path` they keep their defaults, so the
  // one mistake is reported once. MCP stays on `mcp.path`: its clients are given its full URL.
  const below = isRoutePath(root.path) ? root.path : undefined;
  const resolve = <K extends SectionName>(name: K) => SECTIONS[name].resolve(given[name] as never, problems, sectionReadable[name], below) as ResolvedJsonRpcOptions[K];
  const security = resolve('security');
  const stream = resolve('stream');
  if (stream.enabled && stream.path === root.path) problems.push(`"stream.path" must differ from "path" (both are "${root.path}")`);
  const httpStatus = resolve('httpStatus');
  const params = resolve('params');
  const resolvedDurable = resolve('durable');
  // Absent, `durable.keepAliveMs` is `stream.keepAliveMs`: one option keeps every SSE response alive.
  const durable = { ...resolvedDurable, keepAliveMs: resolvedDurable.keepAliveMs ?? stream.keepAliveMs };
  // One route given, another moved below `path` by default, can meet (`path: '/x'` with `stream.path: '/x/streams'`).
  if (durable.enabled && (durable.path === root.path || (stream.enabled && durable.path === stream.path))) {
    problems.push(`"durable.path" (${durable.path}) is already a route of the module`);
  }
  const limits = resolve('limits');
  const mcp = resolveMcpOptions(sectionReadable.mcp ? (given.mcp ?? {}) : {}, [root.path, stream.path, durable.path], problems);
  const observability = resolve('observability');
  const openrpc = resolve('openrpc');
  const explorer = resolve('explorer');
  const served = [root.path, ...(stream.enabled ? [stream.path] : []), ...(durable.enabled ? [durable.path] : [])];
  checkOpenRpcRoutes(openrpc, sectionReadable.openrpc && given.openrpc?.info !== undefined, explorer, served, problems);
  if (problems.size) throw new Error(`JsonRpcModule: invalid options:\n  - ${problems.list.join('\n  - ')}`);
  const { rateLimit, ...rest } = root;
  return deepFreeze({
    ...rest,
    stream,
    httpStatus,
    params,
    security,
    durable,
    mcp,
    openrpc,
    explorer,
    limits,
    rateLimit: rateLimit.rateLimit,
    rateLimitOnStoreError: rateLimit.onStoreError,
    observability,
  });
}

function isRoutePath(path: string): boolean {
  const problems = new OptionProblems();
  check.routePath(problems, '', path);
  return problems.size === 0;
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
