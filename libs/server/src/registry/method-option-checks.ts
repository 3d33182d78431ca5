/**
 * Startup checks of what the decorators recorded: a typo must fail bootstrap (naming the method),
 * never silently disable a limit, a cache or a role.
 */
import { isRpcErrorCode, StreamFormat } from '@nest-jsonrpc/protocol';
import type { RpcCacheOptions } from '../decorators/rpc-cache.decorator.js';
import type { RpcMcpOptions } from '../decorators/rpc-mcp.decorator.js';
import type { RpcMethodOptions } from '../decorators/rpc-method.decorator.js';
import type { RpcRateLimitOptions } from '../decorators/rpc-rate-limit.decorator.js';
import type { RpcStreamOptions } from '../decorators/rpc-stream.decorator.js';
import { MCP_FORMAT_NAMES } from '../options/mcp-options.js';
import type { OptionProblems } from '../options/option-checks.js';
import { checkRateLimitShape, RATE_LIMIT_SCOPES } from '../options/rate-limit-options.js';

const SCOPES = RATE_LIMIT_SCOPES;

const METHOD_OPTION_KEYS = [
  'roles', 'rolesMatch', 'allowPositional', 'rejectUnknown', 'deprecated', 'description',
  'summary', 'tags', 'params', 'result', 'errors', 'discoverable',
];
const STREAM_OPTION_KEYS = ['format', 'durable', 'row'];
const CACHE_KEYS = ['ttl', 'scope', 'tags'];
const MCP_KEYS = ['name', 'title', 'description', 'annotations', 'format', 'enabled'];
const MCP_ANNOTATION_KEYS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'];

/** A JSON Schema given by hand: an object or a boolean. */
function isJsonSchema(value: unknown): boolean {
  return typeof value === 'boolean' || (value !== null && typeof value === 'object' && !Array.isArray(value));
}

export function checkMethodOptions(options: RpcMethodOptions, where: string, problems: OptionProblems): void {
  if (!problems.object(`${where}: options`, options, METHOD_OPTION_KEYS, (key) => `${where}: unknown option "${key}"`)) return;
  const option = (name: string) => `${where}: option "${name}"`;
  problems.stringList(option('roles'), options.roles);
  problems.oneOf(option('rolesMatch'), options.rolesMatch, ['any', 'all']);
  problems.boolean(option('allowPositional'), options.allowPositional);
  problems.boolean(option('rejectUnknown'), options.rejectUnknown);
  problems.boolean(option('discoverable'), options.discoverable);
  const { deprecated } = options;
  if (deprecated !== undefined && typeof deprecated !== 'boolean' && typeof deprecated !== 'string') {
    problems.push(`${option('deprecated')} must be a boolean or a string`);
  }
  problems.string(option('description'), options.description);
  problems.string(option('summary'), options.summary);
  problems.stringList(option('tags'), options.tags);
  if (options.params !== undefined && !isJsonSchema(options.params)) problems.push(`${option('params')} must be a JSON Schema (an object or a boolean)`);
  if (options.result !== undefined && typeof options.result !== 'function' && !isJsonSchema(options.result)) {
    problems.push(`${option('result')} must be a class or a JSON Schema`);
  }
  const { errors } = options;
  if (errors !== undefined && !(Array.isArray(errors) && errors.every((e) => e !== null && typeof e === 'object' && isRpcErrorCode(e.code) && typeof e.message === 'string'))) {
    problems.push(`${option('errors')} must be an array of { code: integer, message: string, data? }`);
  }
}

export function checkStreamOptions(options: RpcStreamOptions, where: string, problems: OptionProblems): void {
  if (!problems.object(`${where}: @RpcStream options`, options, STREAM_OPTION_KEYS, (key) => `${where}: @RpcStream has unknown option "${key}"`)) return;
  const formats = Object.values(StreamFormat) as string[];
  if (options.format !== undefined && !formats.includes(options.format)) {
    problems.push(`${where}: @RpcStream format ${JSON.stringify(options.format)} is not one of ${formats.join(', ')}`);
  }
  problems.boolean(`${where}: @RpcStream "durable"`, options.durable);
  if (options.row !== undefined && typeof options.row !== 'function' && !isJsonSchema(options.row)) {
    problems.push(`${where}: @RpcStream "row" must be a class or a JSON Schema`);
  }
}

export function checkRateLimitOptions(options: RpcRateLimitOptions | undefined, where: string, problems: OptionProblems): void {
  const label = (key?: string) => (key === undefined ? `${where}: @RpcRateLimit options` : `${where}: @RpcRateLimit "${key}"`);
  checkRateLimitShape(options, label, (key) => `${where}: @RpcRateLimit has unknown option "${key}"`, problems);
}

export function checkCacheOptions(options: RpcCacheOptions | undefined, where: string, problems: OptionProblems): void {
  if (options === undefined) return;
  if (!problems.object(`${where}: @RpcCache options`, options, CACHE_KEYS, (key) => `${where}: @RpcCache has unknown option "${key}"`)) return;
  problems.positiveNumber(`${where}: @RpcCache "ttl"`, options.ttl, ' of seconds');
  if (options.scope !== undefined && typeof options.scope !== 'function' && !SCOPES.includes(options.scope)) {
    problems.push(`${where}: @RpcCache "scope" must be "global", "user", "ip" or a function, got ${JSON.stringify(options.scope)}`);
  }
  problems.stringList(`${where}: @RpcCache "tags"`, options.tags);
}

export function checkMcpOptions(options: RpcMcpOptions | undefined, where: string, problems: OptionProblems): void {
  if (options === undefined) return;
  if (!problems.object(`${where}: @RpcMcp options`, options, MCP_KEYS, (key) => `${where}: @RpcMcp has unknown option "${key}"`)) return;
  if (options.name !== undefined && !(typeof options.name === 'string' && options.name.length > 0)) problems.push(`${where}: @RpcMcp "name" must be a non-empty string`);
  problems.string(`${where}: @RpcMcp "title"`, options.title);
  problems.string(`${where}: @RpcMcp "description"`, options.description);
  problems.oneOf(`${where}: @RpcMcp "format"`, options.format, MCP_FORMAT_NAMES);
  problems.boolean(`${where}: @RpcMcp "enabled"`, options.enabled);
  const annotations = options.annotations;
  if (problems.object(`${where}: @RpcMcp "annotations"`, annotations, MCP_ANNOTATION_KEYS, (key) => `${where}: @RpcMcp annotations has unknown hint "${key}"`) && annotations) {
    for (const key of MCP_ANNOTATION_KEYS) problems.boolean(`${where}: @RpcMcp annotations "${key}"`, (annotations as Record<string, unknown>)[key]);
  }
}

