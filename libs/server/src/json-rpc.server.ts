import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { ExternalContextCreator, HttpAdapterHost, ModuleRef } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { RpcDispatcher } from './dispatch/rpc-dispatcher.js';
import { RpcMethodInvoker } from './dispatch/rpc-method-invoker.js';
import { durableHttpRoutes } from './durable/durable-http-routes.js';
import { DurableStreamService } from './durable/durable-stream.service.js';
import { jsonRpcHttpRoutes } from './http/rpc-http-routes.js';
import { JSON_RPC_MODULE_OPTIONS, type ResolvedJsonRpcOptions } from './json-rpc.options.js';
import { RpcMethodExplorer } from './registry/rpc-method-explorer.js';
import { jsonRpcStreamRoutes } from './streaming/rpc-stream-routes.js';
import type { RpcMethodRegistry } from './registry/rpc-method-registry.js';
import { RpcCallPolicyFactory } from './security/rpc-call-policy.js';

/**
 * Wires the pieces at bootstrap: explore methods, build one invoker per method, mount the routes
 * on the Fastify instance. Runs in `onModuleInit`, after `app.useGlobal*()` calls in `main.ts`
 * and before Fastify starts listening.
 */
@Injectable()
export class JsonRpcServer implements OnModuleInit {
  private readonly logger = new Logger('JsonRpc');
  private registryRef: RpcMethodRegistry | undefined;

  constructor(
    private readonly explorer: RpcMethodExplorer,
    private readonly contextCreator: ExternalContextCreator,
    private readonly moduleRef: ModuleRef,
    private readonly adapterHost: HttpAdapterHost,
    @Inject(JSON_RPC_MODULE_OPTIONS) private readonly options: ResolvedJsonRpcOptions,
    private readonly durable: DurableStreamService,
    private readonly policies: RpcCallPolicyFactory,
  ) {}

  /** The methods this server serves (available once the app is initialised). */
  get registry(): RpcMethodRegistry {
    if (!this.registryRef) throw new Error('JsonRpcServer: the application is not initialised yet');
    return this.registryRef;
  }

  onModuleInit(): void {
    const registry = (this.registryRef = this.explorer.explore());
    const invokers = new Map<string, RpcMethodInvoker>();
    let guarded = 0;
    for (const definition of registry.all()) {
      const policy = this.policies.policyFor(definition);
      if (policy) guarded++;
      invokers.set(definition.name, new RpcMethodInvoker(definition, this.contextCreator, this.moduleRef, policy));
    }
    if (guarded) this.logger.log(`${guarded} method(s) with roles, rate limits or caching; ${this.policies.describeStores()}`);
    const dispatcher = new RpcDispatcher(invokers, this.options);
    if (this.options.durable.enabled) {
      this.durable.useRegistry(registry);
      dispatcher.durableStarter = this.durable;
    }
    const adapter = this.adapterHost.httpAdapter;
    if (!adapter) {
      this.logger.warn('No HTTP adapter (application context only): JSON-RPC routes are not mounted');
      return;
    }
    if (adapter.getType() !== 'fastify') {
      throw new Error(`JsonRpcModule needs @nestjs/platform-fastify; this app uses "${adapter.getType()}"`);
    }
    const fastify = adapter.getInstance<FastifyInstance>();
    void fastify.register(jsonRpcHttpRoutes({ dispatcher, options: this.options, logger: this.logger }));
    if (this.options.stream.enabled) {
      void fastify.register(jsonRpcStreamRoutes({ dispatcher, options: this.options, logger: this.logger }));
      this.logger.log(`Streaming on POST/GET ${this.options.stream.path}`);
    }
    if (this.options.durable.enabled) {
      void fastify.register(durableHttpRoutes({ service: this.durable, options: this.options.durable, logger: this.logger }));
    }
  }
}
