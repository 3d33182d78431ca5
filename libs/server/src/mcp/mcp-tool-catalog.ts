import type { RpcMcpAnnotations } from '../decorators/rpc-mcp.decorator.js';
import type { McpFormatName, ResolvedMcpOptions } from '../options/mcp-options.js';
import type { RpcMethodDefinition } from '../registry/rpc-method-definition.js';
import type { RpcMethodRegistry } from '../registry/rpc-method-registry.js';
import { RpcStartupError } from '../registry/rpc-method-explorer.js';
import { componentNameOf, deepFreeze, standaloneSchema, type JsonSchema, type JsonSchemaObject } from '../schema/index.js';
import { isJsonSchemaObject } from '../schema/json-schema.js';
import type { RpcAccessRule } from '../security/rpc-access-rule.js';

/** One tool as `tools/list` (and `GET <path>/tools`) describes it. */
export interface McpToolDescription {
  readonly name: string;
  readonly title?: string;
  readonly description: string;
  readonly inputSchema: JsonSchemaObject;
  readonly outputSchema?: JsonSchemaObject;
  readonly annotations?: Readonly<RpcMcpAnnotations>;
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
}

/** MCP's tool-name alphabet (SEP-986): clients may refuse other names. */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/**
 * Whether a method is a tool, by the first matching rule (issue 11): operator options beat the
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
  /** Every tool, for callers that may call all of them (no tool has roles, or this is the cache's seed). */
  private readonly publicTools: readonly McpToolDescription[];
  private readonly hasProtected: boolean;
  private readonly listsByRoles = new Map<string, readonly McpToolDescription[]>();

  constructor(entries: readonly McpToolEntry[]) {
    this.byName = new Map(entries.map((e) => [e.tool.name, e]));
    this.hasProtected = entries.some((e) => e.access !== undefined);
    this.publicTools = Object.freeze(entries.filter((e) => e.access === undefined).map((e) => e.tool));
  }

  static build(registry: RpcMethodRegistry, options: ResolvedMcpOptions, accessRuleOf: (method: string) => RpcAccessRule | undefined): McpToolCatalog {
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
      entries.push(describeTool(name, definition, registry.components, accessRuleOf(definition.name)));
    }
    if (problems.length) throw new RpcStartupError(problems);
    return new McpToolCatalog(entries);
  }

  get size(): number {
    return this.byName.size;
  }

  /** The tool `name` if the caller may call it; undefined when unknown, hidden or denied alike. */
  find(name: unknown, roles: readonly string[]): McpToolEntry | undefined {
    if (typeof name !== 'string') return undefined;
    const entry = this.byName.get(name);
    if (!entry || (entry.access && !entry.access.allows(roles))) return undefined;
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
): McpToolEntry {
  const mcp = definition.mcp;
  // Every tool gets a description: agents choose tools by it (and MCP's conformance runner asks for one).
  const description = mcp?.description ?? definition.options.description ?? definition.options.summary ?? `Calls the JSON-RPC method "${definition.name}".`;
  const outputSchema = objectSchemaOf(definition.stream ? undefined : definition.schemas.result, components);
  const annotations = annotationsOf(definition);
  const tool: McpToolDescription = {
    name,
    ...(mcp?.title !== undefined && { title: mcp.title }),
    description,
    inputSchema: inputSchemaOf(definition.schemas.params.schema, components),
    ...(outputSchema && { outputSchema }),
    ...(annotations && { annotations }),
  };
  return Object.freeze({ tool: deepFreeze(tool), definition, format: mcp?.format, structured: outputSchema !== undefined, access });
}

/** MCP wants an object root with `properties` always an object, also when the method takes no params. */
function inputSchemaOf(params: JsonSchemaObject, components: Readonly<Record<string, JsonSchemaObject>>): JsonSchemaObject {
  const root = dereferenceRoot(params, components);
  const standalone = standaloneSchema(root, components) as JsonSchemaObject;
  if (root.type !== undefined && root.type !== 'object') return { type: 'object', properties: {} };
  return { ...standalone, type: 'object', properties: isJsonSchemaObject(standalone.properties) ? standalone.properties : {} };
}

/** The result schema when it describes an object (MCP's `outputSchema` must); undefined otherwise. */
function objectSchemaOf(result: JsonSchema | undefined, components: Readonly<Record<string, JsonSchemaObject>>): JsonSchemaObject | undefined {
  if (!isJsonSchemaObject(result)) return undefined;
  const root = dereferenceRoot(result, components);
  if (root.type !== 'object') return undefined;
  return standaloneSchema(root, components) as JsonSchemaObject;
}

/** A root that is only a `$ref` to a component (a result DTO) becomes that component's schema. */
function dereferenceRoot(schema: JsonSchemaObject, components: Readonly<Record<string, JsonSchemaObject>>): JsonSchemaObject {
  const name = componentNameOf(schema.$ref);
  if (name === undefined || !Object.hasOwn(components, name)) return schema;
  const { $ref: _ref, ...rest } = schema;
  return { ...components[name]!, ...rest };
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
