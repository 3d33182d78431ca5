import { Module, type DynamicModule, type InjectionToken, type ModuleMetadata, type OptionalFactoryDependency, type Provider, type Type } from '@nestjs/common';
import { DiscoveryModule, ModuleRef } from '@nestjs/core';
import { RpcCacheInvalidator } from './caching/rpc-cache-invalidator.js';
import { RpcResultCaches } from './caching/rpc-result-caches.js';
import { DurableStreamAccess } from './durable/durable-stream-access.js';
import { DurableStreamRunner } from './durable/durable-stream-runner.js';
import { RpcExceptionMapper } from './errors/rpc-exception-mapper.js';
import { JsonRpcServer } from './json-rpc-server.js';
import { RpcObservability } from './observability/rpc-observability.js';
import {
  JSON_RPC_MODULE_OPTIONS,
  type JsonRpcModuleOptions,
  type JsonRpcOptionsFactory,
  type ResolvedJsonRpcOptions,
} from './options/json-rpc-options.js';
import { OPTIONS_SECTION, OPTIONS_SECTION_PROVIDERS } from './options/option-section-tokens.js';
import { resolveJsonRpcOptions } from './options/resolve-options.js';
import { OPENRPC_DISCOVERY_PROVIDER } from './openrpc/openrpc-discovery.js';
import { RpcCallStepsFactory } from './pipeline/rpc-call-steps.js';
import { RpcPipeline } from './pipeline/rpc-pipeline.js';
import { RedisConnections, REDIS_CONNECTIONS_PROVIDER } from './redis/redis-connections.js';
import { RpcMetadataAccessor } from './registry/rpc-metadata-accessor.js';
import { RpcMethodExplorer } from './registry/rpc-method-explorer.js';
import { RpcRateLimiters } from './throttling/rpc-rate-limiters.js';
import { RpcToolset } from './toolset/rpc-toolset.js';
import { keepTickObjectShape } from './http/tick-object-shape.js';

/** `forRootAsync`: exactly one of `useFactory`, `useClass` or `useExisting`, as `ThrottlerModule.forRootAsync`. */
export interface JsonRpcModuleAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  useFactory?: (...args: any[]) => JsonRpcModuleOptions | Promise<JsonRpcModuleOptions>;
  /** What `useFactory` receives, in order. */
  inject?: Array<InjectionToken | OptionalFactoryDependency>;
  /** A class the module instantiates; its `createJsonRpcOptions()` gives the options. */
  useClass?: Type<JsonRpcOptionsFactory>;
  /** A provider the app already has (exported by one of `imports`) whose `createJsonRpcOptions()` gives the options. */
  useExisting?: Type<JsonRpcOptionsFactory>;
}

/** The app's exception mapper subclass (`exceptionMapper` option), created with DI; else ours. */
const EXCEPTION_MAPPER_PROVIDER: Provider = {
  provide: RpcExceptionMapper,
  inject: [OPTIONS_SECTION.exceptionMapper, ModuleRef],
  useFactory: (exceptionMapper: ResolvedJsonRpcOptions['exceptionMapper'], moduleRef: ModuleRef) =>
    exceptionMapper === RpcExceptionMapper ? new RpcExceptionMapper() : moduleRef.create(exceptionMapper),
};

const CORE_PROVIDERS: Provider[] = [
  RpcMetadataAccessor,
  RpcMethodExplorer,
  EXCEPTION_MAPPER_PROVIDER,
  REDIS_CONNECTIONS_PROVIDER,
  RpcRateLimiters,
  RpcResultCaches,
  RpcCallStepsFactory,
  RpcPipeline,
  RpcCacheInvalidator,
  DurableStreamRunner,
  DurableStreamAccess,
  JsonRpcServer,
  OPENRPC_DISCOVERY_PROVIDER,
  RpcToolset,
  RpcObservability,
];

/**
 * Serves every `@RpcMethod` of the application as JSON-RPC 2.0 on `POST <path>`.
 * Global: import it once, in the root module.
 */
@Module({})
export class JsonRpcModule {
  static forRoot(options: JsonRpcModuleOptions = {}): DynamicModule {
    return JsonRpcModule.build([], [
      {
        provide: JSON_RPC_MODULE_OPTIONS,
        // A factory, so invalid options fail at bootstrap with the other startup errors.
        useFactory: () => resolveJsonRpcOptions(options),
      },
    ]);
  }

  static forRootAsync(options: JsonRpcModuleAsyncOptions): DynamicModule {
    const given = [options.useFactory, options.useClass, options.useExisting].filter((x) => x !== undefined).length;
    if (given !== 1) throw new Error('JsonRpcModule.forRootAsync needs exactly one of useFactory, useClass or useExisting');
    const imports = options.imports ?? [];
    if (options.useFactory) {
      const useFactory = options.useFactory;
      return JsonRpcModule.build(imports, [
        {
          provide: JSON_RPC_MODULE_OPTIONS,
          inject: options.inject ?? [],
          useFactory: async (...args: unknown[]) => resolveJsonRpcOptions(await useFactory(...args)),
        },
      ]);
    }
    const factoryClass = (options.useClass ?? options.useExisting)!;
    const fromFactory: Provider = {
      provide: JSON_RPC_MODULE_OPTIONS,
      inject: [factoryClass],
      useFactory: async (factory: JsonRpcOptionsFactory) => resolveJsonRpcOptions(await factory.createJsonRpcOptions()),
    };
    // useClass: the module instantiates it; useExisting: the app's own instance, from `imports`.
    return JsonRpcModule.build(imports, options.useClass ? [{ provide: factoryClass, useClass: factoryClass }, fromFactory] : [fromFactory]);
  }

  private static build(imports: NonNullable<DynamicModule['imports']>, optionsProviders: Provider[]): DynamicModule {
    // As early as the app's root module is declared, before Nest builds the app: a tick site that
    // has already met two maps cannot be helped (http/tick-object-shape.ts).
    keepTickObjectShape();
    return {
      module: JsonRpcModule,
      global: true,
      imports: [DiscoveryModule, ...imports],
      providers: [...optionsProviders, ...OPTIONS_SECTION_PROVIDERS, ...CORE_PROVIDERS],
      // RedisConnections: for the health indicators of `@nest-jsonrpc/server/terminus`.
      exports: [JSON_RPC_MODULE_OPTIONS, JsonRpcServer, RpcPipeline, RpcExceptionMapper, DurableStreamRunner, RpcCacheInvalidator, RpcToolset, RedisConnections],
    };
  }
}
