import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost, type AbstractHttpAdapter } from '@nestjs/core';
import { DurableHttpRoutes } from './durable/durable-http-routes.js';
import { DurableStreamAccess } from './durable/durable-stream-access.js';
import { DurableStreamRunner } from './durable/durable-stream-runner.js';
import { RpcExceptionMapper } from './errors/rpc-exception-mapper.js';
import { ExplorerPageRoutes } from './explorer/explorer-page-routes.js';
import type { BodyBounds } from './http/body-limit.js';
import { RpcExchangeFactory, type HttpEdge } from './http/http-edge.js';
import { RpcHttpRoutes } from './http/rpc-http-routes.js';
import { RpcReplyWriter } from './http/rpc-reply-writer.js';
import { keepTickObjectShape } from './http/tick-object-shape.js';
import type { ResolvedDurableOptions } from './options/durable-options.js';
import type { ResolvedJsonRpcOptions } from './options/json-rpc-options.js';
import type { ResolvedLimitsOptions } from './options/limits-options.js';
import type { McpMount } from './mcp/index.js';
import type { ResolvedMcpOptions } from './options/mcp-options.js';
import type { ResolvedExplorerOptions, ResolvedOpenRpcOptions } from './options/openrpc-options.js';
import { OPTIONS_SECTION } from './options/option-section-tokens.js';
import { RpcPipeline } from './pipeline/rpc-pipeline.js';
import { OpenRpcDiscovery } from './openrpc/openrpc-discovery.js';
import { OpenRpcHttpRoutes } from './openrpc/openrpc-http-routes.js';
import { RpcMethodExplorer } from './registry/rpc-method-explorer.js';
import type { RpcMethodRegistry } from './registry/rpc-method-registry.js';
import { RpcStreamRoutes } from './streaming/rpc-stream-routes.js';

/** The module's own method classes, the only ones allowed reserved `rpc.` names (registered only when enabled). */
const BUILT_IN_METHODS: ReadonlySet<object> = new Set([OpenRpcDiscovery]);

/**
 * Wires the pieces at bootstrap: explore the methods, build the pipeline, mount the routes on the
 * app's HTTP server through the adapter of its platform (`platforms/`). Runs in `onModuleInit`,
 * after `app.useGlobal*()` calls in `main.ts` and before the server starts listening.
 */
@Injectable()
export class JsonRpcServer implements OnModuleInit {
  private readonly logger = new Logger('JsonRpc');
  private registryRef: RpcMethodRegistry | undefined;
  /** What MCP mounted, when `mcp.enabled` (the tests read its in-flight requests). */
  private mcpMount: McpMount | undefined;

  /** @internal */
  constructor(
    private readonly methodExplorer: RpcMethodExplorer,
    private readonly pipeline: RpcPipeline,
    private readonly mapper: RpcExceptionMapper,
    private readonly adapterHost: HttpAdapterHost,
    private readonly durableRunner: DurableStreamRunner,
    private readonly durableAccess: DurableStreamAccess,
    // The sections of every route it mounts (each route class takes the ones it reads).
    @Inject(OPTIONS_SECTION.path) private readonly path: string,
    @Inject(OPTIONS_SECTION.stream) private readonly stream: ResolvedJsonRpcOptions['stream'],
    @Inject(OPTIONS_SECTION.httpStatus) private readonly httpStatus: ResolvedJsonRpcOptions['httpStatus'],
    @Inject(OPTIONS_SECTION.maxRequestSize) private readonly maxRequestSize: number,
    @Inject(OPTIONS_SECTION.maxBatchSize) private readonly maxBatchSize: number,
    @Inject(OPTIONS_SECTION.batchConcurrency) private readonly batchConcurrency: number,
    @Inject(OPTIONS_SECTION.security) private readonly security: ResolvedJsonRpcOptions['security'],
    @Inject(OPTIONS_SECTION.durable) private readonly durable: ResolvedDurableOptions,
    @Inject(OPTIONS_SECTION.mcp) private readonly mcp: ResolvedMcpOptions,
    @Inject(OPTIONS_SECTION.openrpc) private readonly openrpc: ResolvedOpenRpcOptions,
    @Inject(OPTIONS_SECTION.explorer) private readonly explorer: ResolvedExplorerOptions,
    @Inject(OPTIONS_SECTION.limits) private readonly limits: ResolvedLimitsOptions,
  ) {}

  /** The methods this server serves (available once the app is initialised). */
  get registry(): RpcMethodRegistry {
    if (!this.registryRef) throw new Error('JsonRpcServer: the application is not initialised yet');
    return this.registryRef;
  }

  async onModuleInit(): Promise<void> {
    const registry = (this.registryRef = this.methodExplorer.explore(BUILT_IN_METHODS));
    this.pipeline.init(registry);
    const adapter = this.adapterHost.httpAdapter;
    if (!adapter) {
      this.logger.warn('No HTTP adapter (application context only): JSON-RPC routes are not mounted');
      return;
    }
    // Done when the module was declared (json-rpc-module.ts); again here for a server built otherwise.
    keepTickObjectShape();
    const { pipeline, logger, path, stream, httpStatus, maxRequestSize, maxBatchSize, batchConcurrency, durable, mcp, openrpc, explorer, limits } = this;
    const bounds = { maxRequestSize, limits };
    const writer = new RpcReplyWriter(this.mapper, logger, bounds);
    const edge = await this.edgeOf(adapter, writer, bounds);
    const runner = durable.enabled ? this.durableRunner : undefined;
    edge.mount(new RpcHttpRoutes(pipeline, writer, { path, httpStatus, maxBatchSize, batchConcurrency, stream }, logger, runner).routes());
    if (stream.enabled) {
      edge.mount(new RpcStreamRoutes(pipeline, writer, { path, stream, limits }, logger, runner).routes());
      logger.log(`Streaming on POST/GET ${stream.path}`);
    }
    if (openrpc.enabled) {
      edge.mount(new OpenRpcHttpRoutes(pipeline, writer, openrpc, logger).routes());
      logger.log(`OpenRPC: rpc.discover on POST ${path}, GET ${openrpc.path}`);
    }
    if (explorer.enabled) {
      edge.mount(new ExplorerPageRoutes({ explorer, openrpc }, logger).routes(writer));
      logger.log(`Explorer on GET ${explorer.path}`);
    }
    if (mcp.enabled) {
      // Loaded only when enabled: the MCP SDK (and zod) stay out of apps that do not serve MCP.
      const { mountMcpRoutes } = await import('./mcp/index.js');
      const options = { mcp, durable, maxRequestSize, security: this.security };
      this.mcpMount = await mountMcpRoutes(edge, { registry, pipeline, mapper: this.mapper, writer, options, logger, durable: runner, ...(runner && { tasks: { runner, access: this.durableAccess } }) });
    }
    // After MCP: with `mcp.auth.jwt` its verifier also identifies bearer tokens here, so a durable
    // tool's `sse_url` reads with the token that started it (docs/mcp.md, "Streams and durable methods").
    if (runner) edge.mount(new DurableHttpRoutes(runner, this.durableAccess, writer, { durable, limits, stream }, logger, this.mcpMount?.durableCallers).routes());
  }

  /** The adapter of the app's platform, loaded only for it: a Fastify app never loads Express, and the reverse. */
  private async edgeOf(adapter: AbstractHttpAdapter, writer: RpcReplyWriter, bounds: BodyBounds): Promise<HttpEdge> {
    const exchanges = new RpcExchangeFactory(this.security.rolesResolver);
    const type = adapter.getType();
    if (type === 'fastify') {
      const { FastifyPlatform } = await import('./platforms/fastify-platform.js');
      return new FastifyPlatform(adapter.getInstance(), exchanges, writer, bounds, this.logger);
    }
    if (type === 'express') {
      const { ExpressPlatform } = await import('./platforms/express-platform.js');
      return new ExpressPlatform(adapter.getInstance(), adapter.getHttpServer(), exchanges, writer, bounds, this.logger);
    }
    throw new Error(`JsonRpcModule serves JSON-RPC on @nestjs/platform-fastify or @nestjs/platform-express; this app uses "${type}"`);
  }
}
