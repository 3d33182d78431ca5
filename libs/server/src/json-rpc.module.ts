import { Module, type DynamicModule, type Provider } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { JsonRpcServer } from './json-rpc.server.js';
import {
  JSON_RPC_MODULE_OPTIONS,
  resolveJsonRpcOptions,
  type JsonRpcModuleAsyncOptions,
  type JsonRpcModuleOptions,
} from './json-rpc.options.js';
import { DurableStreamService } from './durable/durable-stream.service.js';
import { RpcMetadataAccessor } from './registry/rpc-metadata-accessor.js';
import { RpcMethodExplorer } from './registry/rpc-method-explorer.js';
import { RpcCacheInvalidator } from './caching/rpc-cache-invalidator.js';
import { RpcCallPolicyFactory } from './security/rpc-call-policy.js';
import { RPC_POLICY_STORES_PROVIDER } from './security/rpc-policy-stores.js';

const CORE_PROVIDERS: Provider[] = [
  RpcMetadataAccessor,
  RpcMethodExplorer,
  JsonRpcServer,
  RPC_POLICY_STORES_PROVIDER,
  RpcCallPolicyFactory,
  RpcCacheInvalidator,
  DurableStreamService,
];

/**
 * Serves every `@RpcMethod` of the application as JSON-RPC 2.0 on `POST <path>`.
 * Global: import it once, in the root module.
 */
@Module({})
export class JsonRpcModule {
  static forRoot(options: JsonRpcModuleOptions = {}): DynamicModule {
    return JsonRpcModule.build([], {
      provide: JSON_RPC_MODULE_OPTIONS,
      // A factory, so invalid options fail at bootstrap with the other startup errors.
      useFactory: () => resolveJsonRpcOptions(options),
    });
  }

  static forRootAsync(options: JsonRpcModuleAsyncOptions): DynamicModule {
    return JsonRpcModule.build(options.imports ?? [], {
      provide: JSON_RPC_MODULE_OPTIONS,
      inject: options.inject ?? [],
      useFactory: async (...args: unknown[]) => resolveJsonRpcOptions(await options.useFactory(...args)),
    });
  }

  private static build(imports: NonNullable<DynamicModule['imports']>, optionsProvider: Provider): DynamicModule {
    return {
      module: JsonRpcModule,
      global: true,
      imports: [DiscoveryModule, ...imports],
      providers: [optionsProvider, ...CORE_PROVIDERS],
      exports: [JSON_RPC_MODULE_OPTIONS, JsonRpcServer, DurableStreamService, RpcCacheInvalidator],
    };
  }
}
