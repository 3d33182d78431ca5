import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { DurableHttpRoutes } from './durable/durable-http-routes.js';
import { DurableStreamAccess } from './durable/durable-stream-access.js';
import { DurableStreamRunner } from './durable/durable-stream-runner.js';
import { RpcExceptionMapper } from './errors/rpc-exception-mapper.js';
import { ExplorerPageRoutes } from './explorer/explorer-page-routes.js';
import { installExpectContinue } from './http/early-answer.js';
import { RpcHttpRoutes } from './http/rpc-http-routes.js';
import { RpcReplyWriter } from './http/rpc-reply-writer.js';
import { closeRequestlessConnectionsOnClose } from './http/requestless-connections.js';
import { JSON_RPC_MODULE_OPTIONS, type ResolvedJsonRpcOptions } from './options/json-rpc-options.js';
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
 * Fastify instance. Runs in `onModuleInit`, after `app.useGlobal*()` calls in `main.ts` and before
 * Fastify starts listening.
 */
@Injectable()
export class JsonRpcServer implements OnModuleInit {
  private readonly logger = new Logger('JsonRpc');
  private registryRef: RpcMethodRegistry | undefined;

  constructor(
    private readonly explorer: RpcMethodExplorer,
    private readonly pipeline: RpcPipeline,
    private readonly mapper: RpcExceptionMapper,
    private readonly adapterHost: HttpAdapterHost,
    @Inject(JSON_RPC_MODULE_OPTIONS) private readonly options: ResolvedJsonRpcOptions,
    private readonly durableRunner: DurableStreamRunner,
    private readonly durableAccess: DurableStreamAccess,
  ) {}

  /** The methods this server serves (available once the app is initialised). */
  get registry(): RpcMethodRegistry {
    if (!this.registryRef) throw new Error('JsonRpcServer: the application is not initialised yet');
    return this.registryRef;
  }

  async onModuleInit(): Promise<void> {
    const registry = (this.registryRef = this.explorer.explore(BUILT_IN_METHODS));
    this.pipeline.init(registry);
    const adapter = this.adapterHost.httpAdapter;
    if (!adapter) {
      this.logger.warn('No HTTP adapter (application context only): JSON-RPC routes are not mounted');
      return;
    }
    if (adapter.getType() !== 'fastify') {
      throw new Error(`JsonRpcModule needs @nestjs/platform-fastify; this app uses "${adapter.getType()}"`);
    }
    const fastify = adapter.getInstance<FastifyInstance>();
    const { options, pipeline, logger } = this;
    const writer = new RpcReplyWriter(this.mapper, logger, options.limits);
    installExpectContinue(fastify);
    closeRequestlessConnectionsOnClose(fastify);
    const durable = options.durable.enabled ? this.durableRunner : undefined;
    void fastify.register(new RpcHttpRoutes(pipeline, writer, options, logger, durable).plugin());
    if (options.stream.enabled) {
      void fastify.register(new RpcStreamRoutes(pipeline, writer, options, logger, durable).plugin());
      logger.log(`Streaming on POST/GET ${options.stream.path}`);
    }
    if (durable) void fastify.register(new DurableHttpRoutes(durable, this.durableAccess, writer, options, logger).plugin());
    if (options.openrpc.enabled) {
      void fastify.register(new OpenRpcHttpRoutes(pipeline, writer, options, logger).plugin());
      logger.log(`OpenRPC: rpc.discover on POST ${options.path}, GET ${options.openrpc.path}`);
    }
    if (options.explorer.enabled) {
      void fastify.register(new ExplorerPageRoutes(options, logger).plugin());
      logger.log(`Explorer on GET ${options.explorer.path}`);
    }
    if (options.mcp.enabled) {
      // Loaded only when enabled: the MCP SDK (and zod) stay out of apps that do not serve MCP.
      const { mountMcpRoutes } = await import('./mcp/index.js');
      mountMcpRoutes(fastify, { registry, pipeline, mapper: this.mapper, writer, options, logger, durable });
    }
  }
}
