import { RpcErrorCode, RpcErrorMessage } from '@nest-jsonrpc/protocol';
import { deepFreeze, reachableComponents, type JsonSchemaObject, type MethodSchemas } from '../schema/index.js';
import {
  OPENRPC_VERSION,
  type OpenRpcDocument,
  type OpenRpcError,
  type OpenRpcInfo,
  type OpenRpcMethod,
  type OpenRpcServer,
  type OpenRpcSignInExtension,
  type OpenRpcStreamExtension,
} from './openrpc-document.js';

/** One method as the document describes it: the registry's facts plus its schemas. */
export interface OpenRpcMethodSource {
  readonly name: string;
  readonly summary?: string;
  readonly description?: string;
  readonly tags?: readonly string[];
  /** `true`, or the reason (appended to the description: OpenRPC's `deprecated` is a boolean). */
  readonly deprecated?: boolean | string;
  readonly schemas: MethodSchemas;
  /** `@RpcMethod(name, { errors })`: errors the method may answer. */
  readonly errors?: readonly OpenRpcError[];
  /** Has roles (implies -32001). Which roles is never written: the document leaks no policy. */
  readonly hasRoles?: boolean;
  /** Has a rate limit (implies -32003). */
  readonly rateLimited?: boolean;
  readonly stream?: OpenRpcStreamExtension;
  /** The login method: how a client uses the token it answers. */
  readonly signIn?: OpenRpcSignInExtension;
}

export interface OpenRpcDocumentSource {
  readonly info: OpenRpcInfo;
  /** Absolute URLs of the JSON-RPC endpoint (e.g. `http://127.0.0.1:3000/rpc`). */
  readonly servers: readonly OpenRpcServer[];
  /** Already filtered to what the caller may see, in the order to list them. */
  readonly methods: readonly OpenRpcMethodSource[];
  /** Every component the methods' schemas may reference (`MethodSchemaBuilder.components()`). */
  readonly components: Readonly<Record<string, JsonSchemaObject>>;
  /** List `rpc.discover` itself among the methods. Default false (see docs/openrpc.md). */
  readonly includeDiscover?: boolean;
}

/** What `rpc.discover` looks like when listed: the service discovery method the OpenRPC spec defines. */
export const RPC_DISCOVER_METHOD: OpenRpcMethod = Object.freeze({
  name: 'rpc.discover',
  summary: 'Returns the OpenRPC document of this API',
  description: 'The service discovery method of the OpenRPC specification; takes no params.',
  paramStructure: 'either' as const,
  params: Object.freeze([]),
  result: Object.freeze({
    name: 'OpenRPC Schema',
    // Described inline: a `$ref` to the meta-schema's URL would send every dereferencing tool
    // (explorer, generator) to the network.
    schema: Object.freeze({
      title: 'OpenRPC document',
      type: 'object',
      properties: Object.freeze({ openrpc: Object.freeze({ type: 'string' }), info: Object.freeze({ type: 'object' }), methods: Object.freeze({ type: 'array' }) }),
      required: Object.freeze(['openrpc', 'info', 'methods']),
    }),
  }),
});

/**
 * Builds an OpenRPC 1.3.2 document (valid under `@open-rpc/meta-schema`). Pure: the caller
 * filters methods by caller and serialises the frozen result once per role set. Only components
 * reachable from the listed methods are included, so an omitted method's DTOs appear nowhere.
 * Throws for configuration mistakes only (a relative server URL, a method listed twice).
 */
export function buildOpenRpcDocument(source: OpenRpcDocumentSource): OpenRpcDocument {
  for (const server of source.servers) {
    if (!isAbsoluteUrl(server.url)) throw new Error(`OpenRPC server url must be absolute (the meta-schema requires a URI), got "${server.url}"`);
  }
  const names = new Set<string>();
  const methods: OpenRpcMethod[] = [];
  for (const method of source.methods) {
    if (names.has(method.name)) throw new Error(`OpenRPC: method "${method.name}" listed twice`);
    names.add(method.name);
    methods.push(describeMethod(method));
  }
  if (source.includeDiscover && !names.has(RPC_DISCOVER_METHOD.name)) methods.push(RPC_DISCOVER_METHOD);
  const reachable = reachableComponents(
    methods.flatMap((m) => [...m.params.map((p) => p.schema), m.result.schema]),
    source.components,
  ).sort();
  const document: OpenRpcDocument = {
    openrpc: OPENRPC_VERSION,
    info: stripUndefined({ ...source.info }),
    servers: source.servers.map((s) => stripUndefined({ name: s.name, url: s.url, description: s.description })),
    methods,
    components: { schemas: Object.fromEntries(reachable.map((name) => [name, source.components[name]])) },
  };
  return deepFreeze(document);
}

function describeMethod(source: OpenRpcMethodSource): OpenRpcMethod {
  const { params, result, row } = source.schemas;
  const reason = typeof source.deprecated === 'string' && source.deprecated !== '' ? `Deprecated: ${source.deprecated}` : undefined;
  const description = [source.description, reason].filter((s) => s !== undefined && s !== '').join('\n\n');
  return stripUndefined({
    name: source.name,
    summary: source.summary,
    description: description === '' ? undefined : description,
    tags: source.tags?.length ? source.tags.map((name) => ({ name })) : undefined,
    paramStructure: params.structure,
    params: params.descriptors.map((d) => ({ name: d.name, required: d.required, schema: d.schema })),
    result: { name: 'result', schema: source.stream ? (row ?? {}) : result },
    errors: errorsOf(source),
    deprecated: source.deprecated === undefined || source.deprecated === false ? undefined : true,
    'x-stream': source.stream ? stripUndefined({ ...source.stream }) : undefined,
    'x-sign-in': source.signIn ? { ...source.signIn } : undefined,
  });
}

/** Declared errors first (their message wins), then the codes the module itself may answer. */
function errorsOf(source: OpenRpcMethodSource): OpenRpcError[] | undefined {
  const errors: OpenRpcError[] = (source.errors ?? []).map((e) => stripUndefined({ code: e.code, message: e.message, data: e.data }));
  const implied = (code: number) => {
    if (!errors.some((e) => e.code === code)) errors.push({ code, message: RpcErrorMessage[code] });
  };
  if (source.schemas.params.described) implied(RpcErrorCode.InvalidParams);
  if (source.hasRoles) implied(RpcErrorCode.AccessDenied);
  if (source.rateLimited) implied(RpcErrorCode.RateLimitExceeded);
  return errors.length ? errors : undefined;
}

function isAbsoluteUrl(url: string): boolean {
  try {
    return new URL(url).protocol !== '';
  } catch {
    return false;
  }
}

function stripUndefined<T extends object>(value: T): T {
  for (const key of Object.keys(value) as Array<keyof T>) if (value[key] === undefined) delete value[key];
  return value;
}
