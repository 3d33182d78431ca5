/**
 * Startup checks of what the decorators recorded: a typo must fail bootstrap (naming the method),
 * never silently disable a limit, a cache or a role.
 */
import { isRpcErrorCode, StreamFormat } from '@nest-jsonrpc/protocol';
import type { RpcCacheOptions } from '../decorators/rpc-cache.js';
import type { RpcMcpOptions } from '../decorators/rpc-mcp.js';
import type { RpcMethodOptions } from '../decorators/rpc-method.js';
import type { RpcRateLimitOptions } from '../decorators/rpc-rate-limit.js';
import type { RpcStreamOptions } from '../decorators/rpc-stream.js';
import { isStandardSchema } from '../decorators/standard-schema.js';
import { MCP_FORMAT_NAMES } from '../options/mcp-options.js';
import type { OptionProblems } from '../options/option-checks.js';
import { checkRateLimitShape, RATE_LIMIT_SCOPES } from '../options/rate-limit-options.js';

const SCOPES = RATE_LIMIT_SCOPES;

const METHOD_OPTION_KEYS = [
  'roles', 'rolesMatch', 'allowPositional', 'rejectUnknown', 'deprecated', 'description',
  'summary', 'tags', 'params', 'result', 'jsonSchema', 'errors', 'discoverable', 'explorer',
];
const EXPLORER_KEYS = ['signIn'];
const SIGN_IN_KEYS = ['tokenPath', 'header', 'scheme'];
/** RFC 9110 `token`: what a header name, and an auth scheme, may be made of. */
const HTTP_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** `token`, `data.accessToken`: dot-separated, no empty segment. */
const PROPERTY_PATH = /^[^.]+(\.[^.]+)*$/;
const STREAM_OPTION_KEYS = ['format', 'durable', 'row', 'jsonSchema'];
const CACHE_KEYS = ['ttl', 'scope', 'tags'];
const RPC_MCP_KEYS = ['name', 'title', 'description', 'annotations', 'format', 'enabled', 'task'];
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
  if (options.params !== undefined && !isStandardSchema(options.params) && !isJsonSchema(options.params)) {
    problems.push(`${option('params')} must be a Standard Schema (zod, Valibot, ArkType, …) or a JSON Schema (an object or a boolean)`);
  }
  if (options.result !== undefined && typeof options.result !== 'function' && !isStandardSchema(options.result) && !isJsonSchema(options.result)) {
    problems.push(`${option('result')} must be a class, a Standard Schema or a JSON Schema`);
  }
  // `jsonSchema.params` is checked with the param plan (the schema may come from @RpcParams({ schema })).
  checkJsonSchemaOverrides(options.jsonSchema, ['params', 'result'], option('jsonSchema'), problems);
  if (options.jsonSchema?.result !== undefined && !isStandardSchema(options.result)) {
    problems.push(`${option('jsonSchema.result')} describes a Standard Schema "result", and there is none: give the JSON Schema as "result" itself`);
  }
  const { errors } = options;
  if (errors !== undefined && !(Array.isArray(errors) && errors.every((e) => e !== null && typeof e === 'object' && isRpcErrorCode(e.code) && typeof e.message === 'string'))) {
    problems.push(`${option('errors')} must be an array of { code: integer, message: string, data? }`);
  }
  checkExplorerOptions(options.explorer, option, problems);
}

function checkExplorerOptions(explorer: RpcMethodOptions['explorer'], option: (name: string) => string, problems: OptionProblems): void {
  if (!problems.object(option('explorer'), explorer, EXPLORER_KEYS, (key) => `${option('explorer')} has unknown key "${key}"`)) return;
  const signIn = explorer?.signIn;
  if (signIn === undefined || signIn === true) return;
  if (signIn === null || typeof signIn !== 'object' || Array.isArray(signIn)) return problems.push(`${option('explorer.signIn')} must be true or { tokenPath?, header?, scheme? }`);
  problems.object(option('explorer.signIn'), signIn, SIGN_IN_KEYS, (key) => `${option('explorer.signIn')} has unknown key "${key}"`);
  const { tokenPath, header, scheme } = signIn;
  if (tokenPath !== undefined && !(typeof tokenPath === 'string' && PROPERTY_PATH.test(tokenPath))) {
    problems.push(`${option('explorer.signIn.tokenPath')} must be a dot-separated property path such as "token" or "data.accessToken"`);
  }
  if (header !== undefined && !(typeof header === 'string' && HTTP_TOKEN.test(header))) problems.push(`${option('explorer.signIn.header')} must be an HTTP header name`);
  if (scheme !== undefined && !(typeof scheme === 'string' && (scheme === '' || HTTP_TOKEN.test(scheme)))) {
    problems.push(`${option('explorer.signIn.scheme')} must be an auth scheme such as "Bearer", or '' for the token alone`);
  }
}

export function checkStreamOptions(options: RpcStreamOptions, where: string, problems: OptionProblems): void {
  if (!problems.object(`${where}: @RpcStream options`, options, STREAM_OPTION_KEYS, (key) => `${where}: @RpcStream has unknown option "${key}"`)) return;
  const formats = Object.values(StreamFormat) as string[];
  if (options.format !== undefined && !formats.includes(options.format)) {
    problems.push(`${where}: @RpcStream format ${JSON.stringify(options.format)} is not one of ${formats.join(', ')}`);
  }
  problems.boolean(`${where}: @RpcStream "durable"`, options.durable);
  if (options.row !== undefined && typeof options.row !== 'function' && !isStandardSchema(options.row) && !isJsonSchema(options.row)) {
    problems.push(`${where}: @RpcStream "row" must be a class, a Standard Schema or a JSON Schema`);
  }
  checkJsonSchemaOverrides(options.jsonSchema, ['row'], `${where}: @RpcStream "jsonSchema"`, problems);
  if (options.jsonSchema?.row !== undefined && !isStandardSchema(options.row)) {
    problems.push(`${where}: @RpcStream "jsonSchema.row" describes a Standard Schema "row", and there is none: give the JSON Schema as "row" itself`);
  }
}

/** `jsonSchema: { params?, result? }` / `{ row? }`: JSON Schemas under known keys. */
function checkJsonSchemaOverrides(value: unknown, keys: readonly string[], label: string, problems: OptionProblems): void {
  if (!problems.object(label, value, keys, (key) => `${label} has unknown key "${key}"`) || value === undefined) return;
  for (const key of keys) {
    const given = (value as Record<string, unknown>)[key];
    if (given !== undefined && !isJsonSchema(given)) problems.push(`${label}.${key} must be a JSON Schema (an object or a boolean)`);
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
  if (!problems.object(`${where}: @RpcMcp options`, options, RPC_MCP_KEYS, (key) => `${where}: @RpcMcp has unknown option "${key}"`)) return;
  if (options.name !== undefined && !(typeof options.name === 'string' && options.name.length > 0)) problems.push(`${where}: @RpcMcp "name" must be a non-empty string`);
  problems.string(`${where}: @RpcMcp "title"`, options.title);
  problems.string(`${where}: @RpcMcp "description"`, options.description);
  problems.oneOf(`${where}: @RpcMcp "format"`, options.format, MCP_FORMAT_NAMES);
  problems.boolean(`${where}: @RpcMcp "enabled"`, options.enabled);
  problems.oneOf(`${where}: @RpcMcp "task"`, options.task, ['forbidden', 'optional', 'required']);
  const annotations = options.annotations;
  if (problems.object(`${where}: @RpcMcp "annotations"`, annotations, MCP_ANNOTATION_KEYS, (key) => `${where}: @RpcMcp annotations has unknown hint "${key}"`) && annotations) {
    for (const key of MCP_ANNOTATION_KEYS) problems.boolean(`${where}: @RpcMcp annotations "${key}"`, (annotations as Record<string, unknown>)[key]);
  }
}

