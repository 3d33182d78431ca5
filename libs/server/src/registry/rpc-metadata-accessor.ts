import { Injectable } from '@nestjs/common';
import {
  CUSTOM_ROUTE_ARGS_METADATA,
  EXCEPTION_FILTERS_METADATA,
  GUARDS_METADATA,
  INTERCEPTORS_METADATA,
  PIPES_METADATA,
  ROUTE_ARGS_METADATA,
} from '@nestjs/common/constants.js';
import {
  RPC_ARGS_METADATA,
  RPC_CACHE_METADATA,
  RPC_MCP_METADATA,
  RPC_METHOD_METADATA,
  RPC_RATE_LIMIT_METADATA,
  RPC_STREAM_METADATA,
} from '../decorators/metadata-keys.js';
import type { RpcCacheOptions } from '../decorators/rpc-cache.js';
import type { RpcMcpOptions } from '../decorators/rpc-mcp.js';
import type { RpcMethodMetadata } from '../decorators/rpc-method.js';
import type { RpcArgMetadata } from '../decorators/rpc-params.js';
import type { RpcRateLimitOptions } from '../decorators/rpc-rate-limit.js';
import type { RpcStreamOptions } from '../decorators/rpc-stream.js';

/** A `createParamDecorator` parameter as Nest records it: its factory runs in Nest's param pipeline. */
export interface CustomParamMetadata {
  readonly key: string;
  readonly index: number;
  readonly entry: Readonly<Record<string, unknown>>;
}

/**
 * The one place that reads decorator metadata: this module's own, Nest's enhancer metadata and
 * Nest's custom-parameter metadata. The explorer turns what it reads into frozen definitions.
 */
@Injectable()
export class RpcMetadataAccessor {
  getMethodMetadata(handler: object): RpcMethodMetadata | undefined {
    return Reflect.getMetadata(RPC_METHOD_METADATA, handler);
  }

  getStreamMetadata(handler: object): RpcStreamOptions | undefined {
    return Reflect.getMetadata(RPC_STREAM_METADATA, handler);
  }

  getRateLimitMetadata(handler: object): RpcRateLimitOptions | undefined {
    return Reflect.getMetadata(RPC_RATE_LIMIT_METADATA, handler);
  }

  getCacheMetadata(handler: object): RpcCacheOptions | undefined {
    return Reflect.getMetadata(RPC_CACHE_METADATA, handler);
  }

  getMcpMetadata(handler: object): RpcMcpOptions | undefined {
    return Reflect.getMetadata(RPC_MCP_METADATA, handler);
  }

  /** `@SkipThrottle({ [name]: true })` on the method, else on its class (the throttler guard's own rule). */
  isThrottleSkipped(classRef: object, handler: object, name: string): boolean {
    const key = `THROTTLER:SKIP${name}`;
    const own = Reflect.getMetadata(key, handler);
    return Boolean(own !== undefined ? own : Reflect.getMetadata(key, classRef));
  }

  getArgsMetadata(classRef: object, methodKey: string): readonly RpcArgMetadata[] {
    return Reflect.getMetadata(RPC_ARGS_METADATA, classRef, methodKey) ?? [];
  }

  /** Parameters decorated with a custom decorator made by Nest's `createParamDecorator`. */
  getCustomParams(classRef: object, methodKey: string): readonly CustomParamMetadata[] {
    const all: Record<string, Record<string, unknown>> = Reflect.getMetadata(ROUTE_ARGS_METADATA, classRef, methodKey) ?? {};
    return Object.entries(all)
      .filter(([key]) => key.includes(CUSTOM_ROUTE_ARGS_METADATA))
      .map(([key, entry]) => ({ key, index: entry.index as number, entry }));
  }

  getParamTypes(prototype: object, methodKey: string): readonly unknown[] {
    return Reflect.getMetadata('design:paramtypes', prototype, methodKey) ?? [];
  }

  /** Which kinds of Nest enhancers are declared on the method or its class. */
  getLocalEnhancers(classRef: object, handler: object): { any: boolean; filters: boolean } {
    const has = (key: string) =>
      (Reflect.getMetadata(key, handler)?.length ?? 0) > 0 || (Reflect.getMetadata(key, classRef)?.length ?? 0) > 0;
    const filters = has(EXCEPTION_FILTERS_METADATA);
    return { any: filters || has(GUARDS_METADATA) || has(INTERCEPTORS_METADATA) || has(PIPES_METADATA), filters };
  }

  /**
   * Gives `to` (a function the module calls instead of the handler: a stream-boxing wrapper, a
   * guards-only probe) every metadata entry of `from`, because Nest reads guards, interceptors,
   * pipes, filters and `Reflector` data from the function it calls (`context.getHandler()`).
   */
  static copyHandlerMetadata(from: object, to: object): void {
    for (const key of Reflect.getMetadataKeys(from)) Reflect.defineMetadata(key, Reflect.getMetadata(key, from), to);
  }
}
