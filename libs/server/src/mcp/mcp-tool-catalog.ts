import type { RpcMcpAnnotations, RpcMcpTaskSupport } from '../decorators/rpc-mcp.js';
import { methodToolDescription, methodToolParameters } from '../method-tools/index.js';
import type { McpFormatName, ResolvedMcpOptions } from '../options/mcp-options.js';
import type { RpcMethodDefinition } from '../registry/rpc-method-definition.js';
import type { RpcMethodRegistry } from '../registry/rpc-method-registry.js';
import { RpcStartupError } from '../registry/rpc-method-explorer.js';
import { deepFreeze, dereferenceRoot, standaloneSchema, type JsonSchema, type JsonSchemaObject } from '../schema/index.js';
import { isJsonSchemaObject } from '../schema/json-schema.js';
import type { RpcAccessRule } from '../security/rpc-access-rule.js';

/** How a tool may be called, in the shape OpenAI's Apps SDK and MCP-Nest publish per tool. */
export type McpSecurityScheme = { readonly type: 'noauth' } | { readonly type: 'oauth2'; readonly scopes: readonly string[] };

/** One tool as `tools/list` (and `GET <path>/tools`) describes it. */
export interface McpToolDescription {
  readonly name: string;
  readonly title?: string;
  readonly description: string;
  readonly inputSchema: JsonSchemaObject;
  readonly outputSchema?: JsonSchemaObject;
  readonly annotations?: Readonly<RpcMcpAnnotations>;
  /** With `mcp.auth`: the scopes a call needs (also in `_meta.securitySchemes`, where MCP keeps data it does not define). */
  readonly securitySchemes?: readonly McpSecurityScheme[];
  readonly _meta?: { readonly securitySchemes: readonly McpSecurityScheme[] };
}

/** An exposed method: its tool description and what a call needs. Frozen. */
export interface McpToolEntry {
  readonly tool: McpToolDescription;
  readonly definition: RpcMethodDefinition;
  /** `@RpcMcp({ format })`, when the decorator says one. */
  readonly format: McpFormatName | undefined;
  /** The result goes to `structuredContent` (the result schema is an object). */
  readonly structured: boolean;
  /** The roles rule (undefined: public). */
  readonly access: RpcAccessRule | undefined;
  /** Whether a call may run as an MCP task (`@RpcMcp({ task })`; `'optional'` for a durable stream by default). */
  readonly task: RpcMcpTaskSupport;
}

/** What else the catalog is built with. */
export interface McpCatalogExtras {
  /** Durable streams are off: a tool marked `@RpcMcp({ task })` fails startup. Default: on. */
  readonly durable?: boolean;
  /** With `mcp.auth`: see `McpToolScopes`. */
  readonly toolScopes?: McpToolScopes;
}

/**
 * The scopes a tool's roles rule asks for (`mcp.auth`'s scope ↔ role mapping). Given when the
 * endpoint is a resource server: every caller then sees every tool with the scopes it needs, and a
 * call whose roles fall short is challenged (401/403) instead of answered as an unknown tool.
 */
export type McpToolScopes = (access: RpcAccessRule | undefined) => readonly string[];

/** MCP's tool-name alphabet (SEP-986): clients may refuse other names. */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/**
 * Whether a method is a tool, by the first matching rule (docs/mcp.md, "Which methods are tools"): operator options beat the
 * developer's decorator, `exclude` beats everything, `include` beats `enabled: false` and prefixes.
 * Reserved `rpc.*` names are never tools.
 */
export function isExposedAsTool(definition: RpcMethodDefinition, options: ResolvedMcpOptions): boolean {
  const { name, mcp } = definition;
  if (name.startsWith('rpc.')) return false;
  if (options.exclude.includes(name)) return false;
  if (options.include.includes(name)) return true;
  if (mcp?.enabled === false) return false;
  if (definition.deprecation !== undefined && mcp === undefined) return false;
  if (options.excludePrefixes.some((prefix) => name.startsWith(prefix))) return false;
  if (options.exposeAll) return true;
  return mcp !== undefined;
}

/**
 * The tools of the app, built once at startup from the frozen registry: every description,
 * schema and annotation is computed here, so `tools/list` only filters by the caller's roles (and
 * caches the answer per role set) and `tools/call` is one map lookup.
 */
export class McpToolCatalog {
  private readonly byName: ReadonlyMap<string, McpToolEntry>;
  private readonly byMethod: ReadonlyMap<string, McpToolEntry>;
  /** Every tool, for callers that may call all of them (no tool has roles, or this is the cache's seed). */
  private readonly publicTools: readonly McpToolDescription[];
  private readonly hasProtected: boolean;
  private readonly listsByRoles = new Map<string, readonly McpToolDescription[]>();
  /** Every caller sees (and may try) every tool: the endpoint challenges instead of hiding (`mcp.auth`). */
  readonly listsAll: boolean;

  constructor(entries: readonly McpToolEntry[], listsAll = false) {
    this.byName = new Map(entries.map((e) => [e.tool.name, e]));
    this.byMethod = new Map(entries.map((e) => [e.definition.name, e]));
    this.listsAll = listsAll;
    this.hasProtected = !listsAll && entries.some((e) => e.access !== undefined);
    this.publicTools = Object.freeze(entries.filter((e) => listsAll || e.access === undefined).map((e) => e.tool));
  }

  static build(
    registry: RpcMethodRegistry,
    options: ResolvedMcpOptions,
    accessRuleOf: (method: string) => RpcAccessRule | undefined,
    { durable = true, toolScopes }: McpCatalogExtras = {},
  ): McpToolCatalog {
    const problems: string[] = [];
    const entries: McpToolEntry[] = [];
    const owners = new Map<string, string>();
    for (const definition of registry.all()) {
      if (!isExposedAsTool(definition, options)) continue;
      const name = definition.mcp?.name ?? definition.name;
      if (!TOOL_NAME.test(name)) {
        problems.push(`MCP tool name "${name}" (method "${definition.name}") must be 1-128 characters of A-Z a-z 0-9 _ - . (set @RpcMcp({ name }))`);
        continue;
      }
      const owner = owners.get(name);
      if (owner !== undefined) {
        problems.push(`MCP tool name "${name}" is used by methods "${owner}" and "${definition.name}" (set @RpcMcp({ name }) on one)`);
        continue;
      }
      owners.set(name, definition.name);
      const task = definition.mcp?.task;
      if (task !== undefined && task !== 'forbidden' && !durable) {
        problems.push(`@RpcMcp({ task: '${task}' }) on method "${definition.name}" needs durable streams (durable: { enabled: true }): a task is a durable stream`);
        continue;
      }
      entries.push(describeTool(name, definition, registry.components, accessRuleOf(definition.name), toolScopes));
    }
    if (problems.length) throw new RpcStartupError(problems);
    return new McpToolCatalog(entries, toolScopes !== undefined);
  }

  /** Every tool, whoever calls (for `scopes_supported` and the like). */
  all(): readonly McpToolEntry[] {
    return [...this.byName.values()];
  }

  /** The tool `name`, whoever calls. */
  named(name: string): McpToolEntry | undefined {
    return this.byName.get(name);
  }

  /** The tool of a method (a task names its method), whoever calls. */
  ofMethod(method: string): McpToolEntry | undefined {
    return this.byMethod.get(method);
  }

  /** Whether what a caller sees depends on who calls (lists filtered by roles): their caches must not be shared. */
  get perCaller(): boolean {
    return this.hasProtected;
  }

  get size(): number {
    return this.byName.size;
  }

  /**
   * The tool `name` if the caller may call it; undefined when unknown, hidden or denied alike.
   * With `listsAll`, a tool whose roles the caller lacks is found too: the caller is challenged.
   */
  find(name: unknown, roles: readonly string[]): McpToolEntry | undefined {
    if (typeof name !== 'string') return undefined;
    const entry = this.byName.get(name);
    if (!entry || (!this.listsAll && entry.access && !entry.access.allows(roles))) return undefined;
    return entry;
  }

  /** The tools the caller may call, in registry order; one frozen array per distinct role set. */
  list(roles: readonly string[]): readonly McpToolDescription[] {
    if (!this.hasProtected || roles.length === 0) return this.publicTools;
    const key = roles.length === 1 ? roles[0] : [...roles].sort().join('\u0000');
    let tools = this.listsByRoles.get(key);
    if (!tools) {
      tools = Object.freeze([...this.byName.values()].filter((e) => !e.access || e.access.allows(roles)).map((e) => e.tool));
      // Role sets are few in practice; the bound keeps a caller inventing roles from growing it.
      if (this.listsByRoles.size < 1_000) this.listsByRoles.set(key, tools);
    }
    return tools;
  }
}

function describeTool(
  name: string,
  definition: RpcMethodDefinition,
  components: Readonly<Record<string, JsonSchemaObject>>,
  access: RpcAccessRule | undefined,
  toolScopes: McpToolScopes | undefined,
): McpToolEntry {
  const mcp = definition.mcp;
  const outputSchema = objectSchemaOf(definition.stream ? undefined : definition.schemas.result, components);
  const annotations = annotationsOf(definition);
  const securitySchemes = toolScopes && securitySchemesOf(toolScopes(access));
  const tool: McpToolDescription = {
    name,
    ...(mcp?.title !== undefined && { title: mcp.title }),
    description: methodToolDescription(definition),
    // A method whose params are not an object (an array schema) still lists: with no named arguments.
    inputSchema: methodToolParameters(definition, components) ?? { type: 'object', properties: {} },
    ...(outputSchema && { outputSchema }),
    ...(annotations && { annotations }),
    ...(securitySchemes && { securitySchemes, _meta: { securitySchemes } }),
  };
  const task = mcp?.task ?? (definition.stream?.durable ? 'optional' : 'forbidden');
  return Object.freeze({ tool: deepFreeze(tool), definition, format: mcp?.format, structured: outputSchema !== undefined, access, task });
}

/** A tool without roles is callable anonymously; one with roles needs a token with its scopes. */
function securitySchemesOf(scopes: readonly string[]): McpSecurityScheme[] {
  return scopes.length ? [{ type: 'oauth2', scopes: [...scopes] }] : [{ type: 'noauth' }];
}

/** The result schema when it describes an object (MCP's `outputSchema` must); undefined otherwise. */
function objectSchemaOf(result: JsonSchema | undefined, components: Readonly<Record<string, JsonSchemaObject>>): JsonSchemaObject | undefined {
  if (!isJsonSchemaObject(result)) return undefined;
  const root = dereferenceRoot(result, components);
  if (root.type !== 'object') return undefined;
  return standaloneSchema(root, components) as JsonSchemaObject;
}

/** The decorator's hints; `@RpcCache` implies read-only and idempotent unless said otherwise. No hint: none at all. */
function annotationsOf(definition: RpcMethodDefinition): RpcMcpAnnotations | undefined {
  const given = definition.mcp?.annotations;
  const hints: RpcMcpAnnotations = { ...given };
  if (definition.cache) {
    hints.readOnlyHint ??= true;
    hints.idempotentHint ??= true;
  }
  for (const key of Object.keys(hints) as (keyof RpcMcpAnnotations)[]) if (hints[key] === undefined) delete hints[key];
  return Object.keys(hints).length ? hints : undefined;
}
