import { DEFAULT_PATHS } from '@nest-jsonrpc/protocol';
import { RpcExceptionMapper } from '../errors/rpc-exception-mapper.js';
import { resolveDurableOptions } from './durable-options.js';
import { LIMITS_KEYS, resolveLimitsOptions } from './limits-options.js';
import { resolveRateLimitOptions } from './rate-limit-options.js';
import type { JsonRpcModuleOptions, ResolvedJsonRpcOptions } from './json-rpc-options.js';
import { resolveObservabilityOptions } from './observability-options.js';
import { OptionProblems } from './option-checks.js';
import { MCP_KEYS, resolveMcpOptions } from './mcp-options.js';
import { resolveOpenRpcOptions } from './openrpc-options.js';
import { resolveRedisOptions } from './redis-options.js';
import { resolveSecurityOptions, SECURITY_KEYS } from './security-options.js';
import { resolveStreamOptions, STREAM_KEYS } from './stream-options.js';

const TOP_LEVEL_KEYS = ['path', 'stream', 'httpStatus', 'maxRequestSize', 'maxBatchSize', 'batchConcurrency', 'params', 'security', 'durable', 'redis', 'exceptionMapper', 'openrpc', 'explorer', 'mcp', 'limits', 'rateLimit', 'observability'];

/**
 * Fills defaults and rejects what we do not understand, every problem in one error: a typo in an
 * option name must not silently fall back to a default. Each section has its own resolver.
 */
export function resolveJsonRpcOptions(options: JsonRpcModuleOptions = {}): ResolvedJsonRpcOptions {
  const problems = new OptionProblems();
  // Unknown names first, all sections: they are the likeliest mistake and explain later problems.
  problems.object('options', options, TOP_LEVEL_KEYS, (key) => `unknown option "${key}"`);
  const section = <T extends object>(name: string, value: T | undefined, known: readonly string[]): Partial<T> =>
    problems.object(`"${name}"`, value, known, (key) => `unknown option "${name}.${key}"`) ? (value ?? {}) : {};
  const stream = section('stream', options.stream, STREAM_KEYS);
  const httpStatus = section('httpStatus', options.httpStatus, ['enabled']);
  const params = section('params', options.params, ['rejectUnknown']);
  const security = section('security', options.security, SECURITY_KEYS);

  const path = options.path ?? DEFAULT_PATHS.rpc;
  problems.path('"path"', path);
  const maxRequestSize = options.maxRequestSize ?? 1_048_576;
  const maxBatchSize = options.maxBatchSize ?? 100;
  const batchConcurrency = options.batchConcurrency ?? 16;
  problems.integer('"maxRequestSize"', maxRequestSize, 0);
  problems.integer('"maxBatchSize"', maxBatchSize, 1);
  problems.integer('"batchConcurrency"', batchConcurrency, 1);
  const resolvedSecurity = resolveSecurityOptions(security, problems);
  const redis = resolveRedisOptions(options.redis, problems);
  const resolvedStream = resolveStreamOptions(stream, path, problems);
  problems.boolean('"httpStatus.enabled"', httpStatus.enabled);
  problems.boolean('"params.rejectUnknown"', params.rejectUnknown);
  const durable = resolveDurableOptions(options.durable, problems);
  const limits = resolveLimitsOptions(section('limits', options.limits, LIMITS_KEYS), problems);
  const rateLimit = resolveRateLimitOptions(options.rateLimit, problems);
  const mcp = resolveMcpOptions(section('mcp', options.mcp, MCP_KEYS), [path, resolvedStream.path, durable.path], problems);
  const observability = resolveObservabilityOptions(options.observability, problems);
  const exceptionMapper = options.exceptionMapper ?? RpcExceptionMapper;
  if (typeof exceptionMapper !== 'function' || !(exceptionMapper === RpcExceptionMapper || exceptionMapper.prototype instanceof RpcExceptionMapper)) {
    problems.push('"exceptionMapper" must be a class that extends RpcExceptionMapper');
  }
  const described = resolveOpenRpcOptions(options.openrpc, options.explorer, [path, ...(resolvedStream.enabled ? [resolvedStream.path] : []), ...(durable.enabled ? [durable.path] : [])], problems);
  if (problems.size) throw new Error(`JsonRpcModule: invalid options:\n  - ${problems.list.join('\n  - ')}`);
  return deepFreeze({
    path,
    stream: resolvedStream,
    httpStatus: { enabled: httpStatus.enabled ?? false },
    maxRequestSize,
    maxBatchSize,
    batchConcurrency,
    params: { rejectUnknown: params.rejectUnknown ?? true },
    security: resolvedSecurity,
    durable,
    redis,
    exceptionMapper,
    mcp,
    openrpc: described.openrpc,
    explorer: described.explorer,
    limits,
    rateLimit,
    observability,
  });
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
