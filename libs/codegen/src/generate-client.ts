import { compile } from 'json-schema-to-typescript';
import { assertOpenRpcDocument, type JsonSchema, type OpenRpcDocumentInput, type OpenRpcMethodInput } from './openrpc-input.js';
import { commentText, pascalCase, propertyKey, TypeNames } from './typescript-names.js';

export interface GenerateClientOptions {
  /** The module the generated file imports the client's types from. Default `@nest-jsonrpc/client`. */
  importFrom?: string;
  /** Where the document came from (a path or URL), named in the header comment. */
  source?: string;
}

const COMPONENT_PREFIX = '#/components/schemas/';
const ROOT_TITLE = 'GeneratedRpcSchemasRoot';
/** Names the generated file declares itself; types from the document get other names. */
const RESERVED_NAMES = [
  ROOT_TITLE, 'JsonRpcClient', 'CallOptions', 'StreamCallOptions', 'JsonRpcStream', 'DurableStreamAttachment', 'AttachOptions',
  'JsonRpcParams', 'DurableStreamHandle', 'RpcApiClient', 'RpcApi', 'createRpcApi', 'attachDurableStream', 'asParams',
];

interface MethodPlan {
  method: OpenRpcMethodInput;
  /** Type of the params argument, and whether it may be left out. */
  paramsType: string;
  paramsOptional: boolean;
  /** Result type (calls), row type (streams and durable streams). */
  valueType: string;
  kind: 'call' | 'stream' | 'durable';
}

/**
 * TypeScript for an OpenRPC document: a params, result and row type per method (types through
 * `json-schema-to-typescript`), and `createRpcApi(client)` whose members call the methods with
 * the right `JsonRpcClient` operation: `call` for plain methods, `stream` for `x-stream` ones,
 * and `call` returning a typed `DurableStreamHandle` for durable ones. Never fetches or reads
 * anything a `$ref` names: references outside `#/components/schemas/` become `unknown`.
 */
export async function generateClient(document: unknown, options: GenerateClientOptions = {}): Promise<string> {
  assertOpenRpcDocument(document);
  const names = new TypeNames(RESERVED_NAMES);
  const componentSchemas = document.components?.schemas ?? {};
  const componentTypes = new Map<string, string>();
  for (const name of Object.keys(componentSchemas)) componentTypes.set(name, names.take(pascalCase(name)));

  const definitions: Record<string, JsonSchema> = {};
  const aliases: string[] = [];
  const rewrite = (schema: JsonSchema): JsonSchema => rewriteRefs(schema, componentTypes);
  for (const [name, schema] of Object.entries(componentSchemas)) {
    const type = componentTypes.get(name)!;
    declareType(type, rewrite(schema), definitions, aliases);
  }

  const plans: MethodPlan[] = [];
  const seen = new Set<string>();
  for (const method of document.methods) {
    if (seen.has(method.name)) throw new Error(`Not an OpenRPC document: method "${method.name}" appears twice`);
    seen.add(method.name);
    const base = pascalCase(method.name);
    const stream = method['x-stream'];
    const kind: MethodPlan['kind'] = stream ? (stream.durable ? 'durable' : 'stream') : 'call';
    let paramsType = 'JsonRpcParams';
    let paramsOptional = true;
    if (method.params.length > 0) {
      paramsType = names.take(`${base}Params`);
      const properties = Object.fromEntries(method.params.map((p) => [p.name, withDescription(rewrite(p.schema), p.description)]));
      const required = method.params.filter((p) => p.required).map((p) => p.name);
      declareType(paramsType, { type: 'object', properties, required, additionalProperties: false }, definitions, aliases);
      paramsOptional = required.length === 0;
    }
    const valueType = names.take(`${base}${kind === 'call' ? 'Result' : 'Row'}`);
    declareType(valueType, rewrite(method.result?.schema ?? {}), definitions, aliases);
    plans.push({ method, paramsType, paramsOptional, valueType, kind });
  }

  const types = await compile(
    { title: ROOT_TITLE, type: 'object', additionalProperties: false, properties: {}, definitions } as never,
    ROOT_TITLE,
    {
      bannerComment: '',
      unreachableDefinitions: true,
      declareExternallyReferenced: true,
      format: true,
      $refOptions: { resolve: { external: false, http: false, file: false } } as never,
    },
  );
  return [
    header(document, options),
    `import type {\n  AttachOptions,\n  CallOptions,\n  DurableStreamAttachment,\n  JsonRpcClient,\n  JsonRpcParams,\n  JsonRpcStream,\n  StreamCallOptions,\n} from ${JSON.stringify(options.importFrom ?? '@nest-jsonrpc/client')};`,
    '',
    stripRoot(types).trim(),
    ...aliases,
    '',
    RUNTIME_PRELUDE,
    apiFactory(plans),
    '',
  ].join('\n');
}

/** A definition for json-schema-to-typescript, or a plain alias when it would only copy or invent. */
function declareType(name: string, schema: JsonSchema, definitions: Record<string, JsonSchema>, aliases: string[]): void {
  if (schema === true || (typeof schema === 'object' && Object.keys(schema).every((k) => k === 'description' || k === 'title'))) {
    aliases.push(`export type ${name} = unknown;`);
    return;
  }
  if (schema === false) {
    aliases.push(`export type ${name} = never;`);
    return;
  }
  const ref = schema.$ref;
  if (typeof ref === 'string' && Object.keys(schema).length === 1 && ref.startsWith('#/definitions/')) {
    // A result that is one component: an alias, not a second copy of the interface.
    aliases.push(`export type ${name} = ${ref.slice('#/definitions/'.length)};`);
    return;
  }
  definitions[name] = { ...schema, title: name };
}

/** Component refs point at their generated type; any other `$ref` (a URL, a file) becomes `{}`. */
function rewriteRefs(schema: JsonSchema, componentTypes: ReadonlyMap<string, string>): JsonSchema {
  /** `schema`: keywords; `names`: keys are property names (`properties`); `data`: copied as is. */
  const walk = (value: unknown, mode: 'schema' | 'names' | 'data'): unknown => {
    if (mode === 'data' || value === null || typeof value !== 'object') return value;
    if (Array.isArray(value)) return value.map((item) => walk(item, 'schema'));
    const source = value as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    if (mode === 'names') {
      for (const [key, child] of Object.entries(source)) out[key] = walk(child, 'schema');
      return out;
    }
    if (typeof source.$ref === 'string') {
      const component = source.$ref.startsWith(COMPONENT_PREFIX) ? componentTypes.get(source.$ref.slice(COMPONENT_PREFIX.length)) : undefined;
      return component ? { $ref: `#/definitions/${component}` } : {};
    }
    for (const [key, child] of Object.entries(source)) {
      // `$id`/`$schema` would make the resolver look elsewhere; titles would rename generated types.
      if (key === '$id' || key === '$schema' || key === 'title') continue;
      const childMode = NAME_MAPS.has(key) ? 'names' : DATA_KEYWORDS.has(key) ? 'data' : 'schema';
      out[key] = walk(child, childMode);
    }
    return out;
  };
  return walk(schema, 'schema') as JsonSchema;
}

const NAME_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
const DATA_KEYWORDS = new Set(['enum', 'const', 'default', 'examples', 'required']);

function withDescription(schema: JsonSchema, description: string | undefined): JsonSchema {
  return description && typeof schema === 'object' ? { ...schema, description } : schema;
}

/** Drops the holder interface and json-schema-to-typescript's "referenced by" notes (noise here). */
function stripRoot(types: string): string {
  return types
    .replace(new RegExp(`export interface ${ROOT_TITLE} \\{\\s*\\}\\n?`), '')
    .replace(/\/\*\*\n \* This interface was referenced by `[^`]*`'s JSON-Schema\n \* via the `definition` "[^"]*"\.\n \*\/\n/g, '')
    .replace(/\n \*\n \* This interface was referenced by `[^`]*`'s JSON-Schema\n \* via the `definition` "[^"]*"\./g, '');
}

function header(document: OpenRpcDocumentInput, options: GenerateClientOptions): string {
  const from = options.source ? ` from ${options.source}` : '';
  return [
    '/* eslint-disable */',
    `// Generated by \`nest-jsonrpc-client generate\`${commentLine(from)}: ${commentLine(document.info.title)} ${commentLine(String(document.info.version ?? ''))}.`,
    '// Do not edit: regenerate when the API changes.',
    '',
  ].join('\n');
}

function commentLine(text: string): string {
  return text.replace(/[\r\n]+/g, ' ');
}

const RUNTIME_PRELUDE = `/** What a durable stream method answers at once; its rows arrive as \`chunk\` events (see attachDurableStream). */
export interface DurableStreamHandle<TRow = unknown> {
  stream_id: string;
  sse_url: string;
  status: string;
  /** Type only (never sent): the row type of this stream's \`chunk\` events. */
  readonly __row?: TRow;
}

/** The client operations the API uses (a JsonRpcClient, or anything shaped like it). */
export type RpcApiClient = Pick<JsonRpcClient, 'call' | 'stream' | 'attach'>;

/** Follows a durable stream started through the API; \`chunk\` events carry its rows. */
export function attachDurableStream<TRow>(client: RpcApiClient, handle: DurableStreamHandle<TRow>, options?: AttachOptions): DurableStreamAttachment<TRow> {
  return client.attach<TRow>(handle.stream_id, options);
}

/** Generated params types are interfaces: pass them where the client takes JsonRpcParams. */
const asParams = (params: object | undefined): JsonRpcParams | undefined => params as JsonRpcParams | undefined;
`;

interface ApiNode {
  children: Map<string, ApiNode>;
  plan?: MethodPlan;
}

function apiFactory(plans: readonly MethodPlan[]): string {
  const root: ApiNode = { children: new Map() };
  for (const plan of plans) {
    let node = root;
    for (const segment of plan.method.name.split('.')) {
      let child = node.children.get(segment);
      if (!child) node.children.set(segment, (child = { children: new Map() }));
      node = child;
    }
    node.plan = plan;
  }
  const lines = [
    '/** The API of the document: one member per method, grouped by the dots in method names. */',
    'export function createRpcApi(client: RpcApiClient) {',
    `  return ${objectLiteral(root, '  ')};`,
    '}',
    '',
    'export type RpcApi = ReturnType<typeof createRpcApi>;',
  ];
  return lines.join('\n');
}

function objectLiteral(node: ApiNode, indent: string): string {
  const inner = `${indent}  `;
  const members: string[] = [];
  for (const [segment, child] of node.children) {
    const key = propertyKey(segment);
    const fn = child.plan ? methodFunction(child.plan, inner) : undefined;
    const nested = child.children.size ? objectLiteral(child, inner) : undefined;
    // A method that is also a namespace (`a` and `a.b`): the function carries the namespace.
    const value = fn && nested ? `Object.assign(${fn}, ${nested})` : (fn ?? nested!);
    members.push(`${child.plan ? docComment(child.plan.method, inner) : ''}${inner}${key}: ${value},`);
  }
  return `{\n${members.join('\n')}\n${indent}}`;
}

function methodFunction(plan: MethodPlan, indent: string): string {
  const name = JSON.stringify(plan.method.name);
  const params = `params${plan.paramsOptional ? '?' : ''}: ${plan.paramsType}`;
  const value = plan.valueType;
  switch (plan.kind) {
    case 'stream':
      return `(${params}, options?: StreamCallOptions): JsonRpcStream<${value}> =>\n${indent}  client.stream<${value}>(${name}, asParams(params), options)`;
    case 'durable':
      return `(${params}, options?: CallOptions): Promise<DurableStreamHandle<${value}>> =>\n${indent}  client.call<DurableStreamHandle<${value}>>(${name}, asParams(params), options)`;
    default:
      return `(${params}, options?: CallOptions): Promise<${value}> =>\n${indent}  client.call<${value}>(${name}, asParams(params), options)`;
  }
}

function docComment(method: OpenRpcMethodInput, indent: string): string {
  const lines: string[] = [];
  if (typeof method.summary === 'string' && method.summary) lines.push(...commentText(method.summary).split('\n'));
  if (typeof method.description === 'string' && method.description) {
    if (lines.length) lines.push('');
    lines.push(...commentText(method.description).split('\n'));
  }
  const stream = method['x-stream'];
  if (stream) {
    if (lines.length) lines.push('');
    lines.push(stream.durable ? 'Durable stream: resolves a handle; attachDurableStream(client, handle) yields its events.' : `Stream (${commentText(String(stream.format ?? 'ndjson'))}): iterate the rows.`);
  }
  if (method.deprecated) lines.push('@deprecated');
  if (!lines.length) return '';
  return `${indent}/**\n${lines.map((l) => `${indent} *${l ? ` ${l}` : ''}`).join('\n')}\n${indent} */\n`;
}
