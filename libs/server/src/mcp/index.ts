import type { Logger } from '@nestjs/common';
import type { DurableCallerIdentifier, DurableCallerIdentity } from '../durable/durable-http-routes.js';
import type { DurableStreamAccess } from '../durable/durable-stream-access.js';
import type { DurableStreamRunner } from '../durable/durable-stream-runner.js';
import type { RpcHttpExchange } from '../context/rpc-context.js';
import type { RpcExceptionMapper } from '../errors/rpc-exception-mapper.js';
import type { HttpEdge } from '../http/http-edge.js';
import type { RpcReplyWriter } from '../http/rpc-reply-writer.js';
import type { ResolvedJsonRpcOptions } from '../options/json-rpc-options.js';
import type { DurableCallStarter } from '../pipeline/durable-call-starter.js';
import type { RpcPipeline } from '../pipeline/rpc-pipeline.js';
import type { RpcMethodRegistry } from '../registry/rpc-method-registry.js';
import { McpResourceServer } from './auth/mcp-resource-server.js';
import { McpHttpRoutes } from './mcp-http-routes.js';
import { McpInFlightRequests } from './mcp-in-flight-requests.js';
import { McpMetadataRoutes } from './mcp-metadata-routes.js';
import { McpNativeMethods } from './mcp-native-methods.js';
import { McpRestRoutes } from './mcp-rest-routes.js';
import { McpToolCatalog } from './mcp-tool-catalog.js';
import { McpToolRunner } from './mcp-tool-runner.js';
import { McpTasks } from './tasks/mcp-tasks.js';

export { McpHttpRoutes } from './mcp-http-routes.js';
export { McpRestRoutes } from './mcp-rest-routes.js';
export { McpToolCatalog, isExposedAsTool, type McpToolDescription, type McpToolEntry } from './mcp-tool-catalog.js';
export { McpToolRunner, type McpToolResult } from './mcp-tool-runner.js';

export interface McpMountContext {
  readonly registry: RpcMethodRegistry;
  readonly pipeline: RpcPipeline;
  readonly mapper: RpcExceptionMapper;
  readonly writer: RpcReplyWriter;
  /** The sections MCP reads: its own, whether durable streams run (tasks, durable tools), the body bound the SDK is told, and who the caller is (`security.userIdResolver`). */
  readonly options: Pick<ResolvedJsonRpcOptions, 'mcp' | 'durable' | 'maxRequestSize'> & { readonly security: Pick<ResolvedJsonRpcOptions['security'], 'userIdResolver'> };
  readonly logger: Logger;
  readonly durable: DurableCallStarter | undefined;
  /** Durable streams, for MCP tasks: the runner and who may see which stream. Absent: no tasks. */
  readonly tasks?: { readonly runner: DurableStreamRunner; readonly access: DurableStreamAccess };
}

/** What `mountMcpRoutes` built that lives on with the app. */
export interface McpMount {
  readonly catalog: McpToolCatalog;
  /** The requests in flight a `notifications/cancelled` may cancel. */
  readonly inFlight: McpInFlightRequests;
  /**
   * With `mcp.auth.jwt`: the verifier of the MCP routes for the durable routes, so a durable
   * tool's `sse_url` reads with the bearer token that started the stream (`McpResourceServer.identify`).
   */
  readonly durableCallers: DurableCallerIdentifier | undefined;
}

/**
 * Builds the tool catalog once (startup fails on a bad tool name) and mounts `POST <mcp.path>`
 * on `edge`, the REST surface when `mcp.rest`, and the Protected Resource Metadata when
 * `mcp.auth`.
 */
export async function mountMcpRoutes(edge: HttpEdge, c: McpMountContext): Promise<McpMount> {
  const { options, writer, logger } = c;
  const auth = options.mcp.auth;
  // The resource server reads the catalog's scopes lazily; the catalog asks it which scopes a tool needs.
  const resourceServer = auth && new McpResourceServer(auth, (scopeRoles) => [...new Set(catalog.all().flatMap((e) => scopeRoles.scopesFor(e.access)))]);
  const catalog = McpToolCatalog.build(c.registry, options.mcp, (method) => c.pipeline.accessRuleOf(method), {
    durable: options.durable.enabled,
    ...(resourceServer && { toolScopes: (access) => resourceServer.scopeRoles.scopesFor(access) }),
  });
  const runner = new McpToolRunner(c.pipeline, c.mapper, c.durable);
  const tasks = c.tasks && new McpTasks(c.tasks.runner, c.tasks.access, c.pipeline, catalog, runner, options);
  const inFlight = new McpInFlightRequests(options.security.userIdResolver);
  const native = new McpNativeMethods(catalog, runner, tasks, resourceServer, options.mcp, inFlight);
  const routes = new McpHttpRoutes(catalog, runner, writer, options, logger, inFlight, native, resourceServer);
  edge.mount(routes.routes());
  if (options.mcp.rest) edge.mount(new McpRestRoutes(catalog, runner, writer, options.mcp, logger, (exchange) => routes.checkHost(exchange), resourceServer).routes());
  if (resourceServer) edge.mount(new McpMetadataRoutes(resourceServer, writer).routes());
  const rest = options.mcp.rest ? ` (REST: GET ${options.mcp.path}/tools, POST ${options.mcp.path}/call)` : '';
  const extras = [tasks && 'tasks on durable streams', resourceServer && `OAuth resource ${auth!.resource} (metadata at ${resourceServer.metadataPaths.join(', ')})`].filter(Boolean);
  logger.log(`MCP on POST ${options.mcp.path}: ${catalog.size} tool(s)${rest}${extras.length ? `; ${extras.join('; ')}` : ''}`);
  const durableCallers = resourceServer && auth!.jwt ? durableCallerIdentifier(resourceServer, c.pipeline) : undefined;
  return { catalog, inFlight, durableCallers };
}

/**
 * The durable routes' identifier under `mcp.auth.jwt`: the verifier's answer in their words. A
 * caller the token named gets, on a 403 for a stream's method, the same `insufficient_scope`
 * challenge a tool with that method's roles gets on `/mcp` (the scopes from `scopeRoles`).
 */
function durableCallerIdentifier(resourceServer: McpResourceServer, pipeline: RpcPipeline): DurableCallerIdentifier {
  const byRequest: DurableCallerIdentity = Object.freeze({ kind: 'request' });
  const byToken: DurableCallerIdentity = Object.freeze({
    kind: 'credentials',
    stepUp: (method: string) => resourceServer.insufficientScope(pipeline.accessRuleOf(method)).wwwAuthenticate,
  });
  return async (exchange: RpcHttpExchange): Promise<DurableCallerIdentity> => {
    const found = await resourceServer.identify(exchange);
    if (found.kind === 'refused') return { kind: 'refused', refusal: found.refusal };
    return found.kind === 'token' ? byToken : byRequest;
  };
}
