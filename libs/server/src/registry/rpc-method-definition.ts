import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper.js';
import type { StreamFormat } from '@nest-jsonrpc/protocol';
import type { RpcCacheOptions } from '../decorators/rpc-cache.js';
import type { RpcMcpOptions } from '../decorators/rpc-mcp.js';
import type { RpcMethodOptions } from '../decorators/rpc-method.js';
import type { RpcRateLimitOptions } from '../decorators/rpc-rate-limit.js';
import type { RpcStreamOptions } from '../decorators/rpc-stream.js';
import type { RolesMatch } from '../options/json-rpc-options.js';
import type { ParamPlan } from '../params/param-plan.js';
import type { StandardSchemaCheck } from '../params/standard-schema-check.js';
import type { MethodSchemas } from '../schema/index.js';
import type { RolesSource } from '../security/effective-roles.js';
import type { CustomParamMetadata } from './rpc-metadata-accessor.js';

/** Everything known about one RPC method at startup. Frozen; the runtime only reads it. */
export interface RpcMethodDefinition {
  readonly name: string;
  readonly options: Readonly<RpcMethodOptions>;
  /** The provider or controller that declares it. */
  readonly wrapper: InstanceWrapper;
  /**
   * The object the handler is called on: the singleton instance (for a provider replaced by a
   * plain object in a test, an object of the original class standing in for it, see
   * rpc-method-hosts.ts); undefined for request-scoped providers (resolved per request).
   */
  readonly instance: object | undefined;
  /** The class that declares the method. */
  readonly classRef: object;
  readonly methodKey: string;
  /**
   * The function called, carrying the decorated method's metadata (where Nest reads the
   * enhancers): the method as declared, or the replacement's method wrapped with that metadata
   * (a subclass override, a provider replaced in a test; see rpc-method-hosts.ts).
   */
  readonly handler: (...args: unknown[]) => unknown;
  /** @internal */
  readonly paramPlan: ParamPlan;
  /** @internal Parameters with a custom decorator (`createParamDecorator`), filled by Nest's param pipeline. */
  readonly customParams: readonly CustomParamMetadata[];
  /** Provider (or one of its dependencies) is request- or transient-scoped. */
  readonly isScoped: boolean;
  /** Guards, interceptors, pipes or filters apply (method, class or global): run Nest's chain. */
  readonly hasEnhancers: boolean;
  readonly hasFilters: boolean;
  /** Effective roles (own, prefix or default; empty when public), resolved at startup. */
  readonly roles: readonly string[];
  readonly rolesMatch: RolesMatch;
  /** Which rule gave `roles`. */
  readonly rolesSource: RolesSource;
  /** `@RpcRateLimit`, unless lifted by `@SkipThrottle({ rpc: true })`. */
  readonly rateLimit: Readonly<RpcRateLimitOptions> | undefined;
  /** `@RpcCache`. */
  readonly cache: Readonly<RpcCacheOptions> | undefined;
  /** `@RpcStream` options (format filled in) when the method streams; undefined otherwise. */
  readonly stream: (Readonly<RpcStreamOptions> & { readonly format: StreamFormat }) | undefined;
  /** `@RpcMcp` options, when the method has the decorator. */
  readonly mcp: Readonly<RpcMcpOptions> | undefined;
  /** Value for `X-Rpc-Deprecated`, when deprecated. */
  readonly deprecation: string | undefined;
  /** @internal JSON Schemas of the params, the result and (streams) one row, built once at startup. */
  readonly schemas: MethodSchemas;
  /** @internal Under the module's `validateResults`: the Standard Schema `result` a value must pass (not for streams). */
  readonly resultCheck: StandardSchemaCheck | undefined;
  /** @internal Under the module's `validateResults`: the Standard Schema `row` each row must pass. */
  readonly rowCheck: StandardSchemaCheck | undefined;
}
