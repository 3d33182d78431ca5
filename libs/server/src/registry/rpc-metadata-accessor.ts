import { Injectable } from '@nestjs/common';
import { EXCEPTION_FILTERS_METADATA, GUARDS_METADATA, INTERCEPTORS_METADATA, PIPES_METADATA } from '@nestjs/common/constants.js';
import {
  RPC_ARGS_METADATA,
  RPC_CACHE_METADATA,
  RPC_METHOD_METADATA,
  RPC_RATE_LIMIT_METADATA,
  RPC_STREAM_METADATA,
} from '../decorators/metadata-keys.js';
import type { RpcCacheOptions } from '../decorators/rpc-cache.decorator.js';
import type { RpcRateLimitOptions } from '../decorators/rpc-rate-limit.decorator.js';
import type { RpcStreamOptions } from '../decorators/rpc-stream.decorator.js';
import type { RpcMethodMetadata } from '../decorators/rpc-method.decorator.js';
import type { RpcArgMetadata } from '../decorators/rpc-param.decorators.js';

/** The one place that reads this module's decorator metadata (and Nest's enhancer metadata). */
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

  /** `@SkipThrottle({ [name]: true })` on the method, else on its class (the throttler guard's own rule). */
  isThrottleSkipped(classRef: object, handler: object, name: string): boolean {
    const key = `THROTTLER:SKIP${name}`;
    const own = Reflect.getMetadata(key, handler);
    return Boolean(own !== undefined ? own : Reflect.getMetadata(key, classRef));
  }

  getArgsMetadata(classRef: object, methodKey: string): readonly RpcArgMetadata[] {
    return Reflect.getMetadata(RPC_ARGS_METADATA, classRef, methodKey) ?? [];
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
}
