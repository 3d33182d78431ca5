import { isReservedMethodName } from '@nest-jsonrpc/protocol';
import { RpcSerializedResult } from '../caching/serialized-result.js';
import type { RpcSignInOptions } from '../decorators/rpc-method.js';
import type { ResolvedJsonRpcOptions } from '../options/json-rpc-options.js';
import type { RpcMethodDefinition } from '../registry/rpc-method-definition.js';
import type { RpcMethodRegistry } from '../registry/rpc-method-registry.js';
import type { RpcAccessRule } from '../security/rpc-access-rule.js';
import { buildOpenRpcDocument, type OpenRpcMethodSource } from './openrpc-document-builder.js';
import type { OpenRpcDocument, OpenRpcSignInExtension } from './openrpc-document.js';

/** Most documents kept serialised (distinct server URL × visible method set); least recently used go first. */
export const OPENRPC_DOCUMENT_CACHE_SIZE = 256;

/** One listed method: what the document says about it, and the roles rule that decides who sees it. */
interface ListedMethod {
  readonly source: OpenRpcMethodSource;
  readonly access: RpcAccessRule | undefined;
}

/** A `Host` (or `X-Forwarded-Host` under `trustProxy`) fit to appear in a URL: a name or address, and a port. */
const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;

/** What the documents read of the resolved options: `info` and `serverUrl`, and the routes each method is called on. */
export type OpenRpcDocumentOptions = Pick<ResolvedJsonRpcOptions, 'path' | 'openrpc' | 'stream' | 'durable'>;

/**
 * The OpenRPC document of each caller, pre-serialised. The method facts are gathered once from
 * the frozen registry; a caller's document depends only on which methods their roles let them
 * call (the same `RpcAccessRule` the roles step enforces) and on the server URL, so those two
 * are the cache key: role sets that see the same methods share one document.
 */
export class OpenRpcDocuments {
  private readonly listed: readonly ListedMethod[];
  private readonly components: RpcMethodRegistry['components'];
  private readonly cache = new Map<string, RpcSerializedResult>();

  constructor(
    registry: RpcMethodRegistry,
    accessRuleOf: (method: string) => RpcAccessRule | undefined,
    private readonly options: OpenRpcDocumentOptions,
  ) {
    const listed: ListedMethod[] = [];
    for (const definition of registry.all()) {
      if (definition.options.discoverable === false || isReservedMethodName(definition.name)) continue;
      listed.push({ source: this.sourceOf(definition), access: accessRuleOf(definition.name) });
    }
    this.listed = listed;
    this.components = registry.components;
  }

  /** The document `roles` may read, as JSON, with `servers[0].url` = `serverUrl`. */
  forCaller(roles: readonly string[], serverUrl: string): RpcSerializedResult {
    let key = serverUrl + '\n';
    for (const { access } of this.listed) key += access === undefined || access.allows(roles) ? '1' : '0';
    const cache = this.cache;
    const hit = cache.get(key);
    if (hit) {
      // Least recently used goes first: re-inserting moves the key to the end of the Map's order.
      cache.delete(key);
      cache.set(key, hit);
      return hit;
    }
    const json = new RpcSerializedResult(JSON.stringify(this.build(roles, serverUrl)));
    cache.set(key, json);
    if (cache.size > OPENRPC_DOCUMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
    return json;
  }

  /** The document itself (not cached): what `forCaller` serialises. */
  build(roles: readonly string[], serverUrl: string): OpenRpcDocument {
    return buildOpenRpcDocument({
      info: this.options.openrpc.info,
      servers: [{ name: 'default', url: serverUrl }],
      methods: this.listed.filter(({ access }) => access === undefined || access.allows(roles)).map((m) => m.source),
      components: this.components,
    });
  }

  /**
   * `openrpc.serverUrl`, else the endpoint's URL as the request reached it (the platform's
   * `request.protocol` and `request.host`, which honour Fastify's `trustProxy` and Express's
   * `trust proxy`). A host that is not a plain name or address (it is the client's header) is
   * replaced by `localhost`.
   */
  serverUrlOf(request: { readonly protocol?: string; readonly host?: string }): string {
    const configured = this.options.openrpc.serverUrl;
    if (configured !== undefined) return configured;
    const host = request.host;
    return `${request.protocol === 'https' ? 'https' : 'http'}://${typeof host === 'string' && HOST.test(host) ? host : 'localhost'}${this.options.path}`;
  }

  private sourceOf(d: RpcMethodDefinition): OpenRpcMethodSource {
    const { options } = this;
    const o = d.options;
    const stream = d.stream;
    return {
      name: d.name,
      summary: o.summary,
      description: o.description,
      tags: o.tags,
      deprecated: o.deprecated,
      errors: o.errors,
      schemas: d.schemas,
      hasRoles: d.roles.length > 0,
      rateLimited: d.rateLimit !== undefined,
      stream: stream && {
        format: stream.format,
        path: stream.durable ? options.path : options.stream.path,
        durable: stream.durable === true,
        streamsPath: stream.durable ? options.durable.path : undefined,
      },
      signIn: signInOf(o.explorer?.signIn),
    };
  }
}

/** `explorer.signIn` with its defaults filled in, as `x-sign-in` publishes it. */
function signInOf(signIn: true | RpcSignInOptions | undefined): OpenRpcSignInExtension | undefined {
  if (!signIn) return undefined;
  const given = signIn === true ? {} : signIn;
  return { tokenPath: given.tokenPath ?? 'token', header: given.header ?? 'Authorization', scheme: given.scheme ?? 'Bearer' };
}
