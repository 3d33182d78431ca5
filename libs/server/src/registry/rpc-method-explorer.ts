import { Inject, Injectable, Logger } from '@nestjs/common';
import { DiscoveryService, ExternalContextCreator, MetadataScanner } from '@nestjs/core';
import type { ApplicationConfig } from '@nestjs/core';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper.js';
import { isReservedMethodName, StreamFormat } from '@nest-jsonrpc/protocol';
import { RpcContext } from '../context/rpc-context.js';
import type { RpcMethodOptions } from '../decorators/rpc-method.decorator.js';
import { JSON_RPC_MODULE_OPTIONS, type ResolvedJsonRpcOptions } from '../options/json-rpc-options.js';
import { OptionProblems } from '../options/option-checks.js';
import { ParamPlan } from '../params/param-plan.js';
import { resolveEffectiveRoles } from '../security/effective-roles.js';
import { RPC_THROTTLER_NAME } from '../throttling/rpc-method-rate-limiter.js';
import { checkCacheOptions, checkMcpOptions, checkMethodOptions, checkRateLimitOptions, checkStreamOptions } from './method-option-checks.js';
import { describeMethods, type RpcMethodDraft } from './method-schemas.js';
import { RpcMetadataAccessor } from './rpc-metadata-accessor.js';
import { RpcMethodRegistry } from './rpc-method-registry.js';

const NO_BUILT_INS: ReadonlySet<object> = new Set();

/** Raised at bootstrap with every configuration problem found, so one restart fixes them all. */
export class RpcStartupError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`JsonRpcModule cannot start:\n  - ${problems.join('\n  - ')}`);
    this.name = 'RpcStartupError';
  }
}

/**
 * Finds every `@RpcMethod` on providers and controllers once, at bootstrap, builds its param plan
 * and enhancer summary, checks the whole set and returns a frozen registry.
 */
@Injectable()
export class RpcMethodExplorer {
  private readonly logger = new Logger('JsonRpc');

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly metadata: RpcMetadataAccessor,
    private readonly contextCreator: ExternalContextCreator,
    @Inject(JSON_RPC_MODULE_OPTIONS) private readonly options: ResolvedJsonRpcOptions,
  ) {}

  /**
   * `builtIns`: the module's own method classes (`rpc.discover`), the only ones allowed a reserved
   * `rpc.` name; the app can never register one (see `isReservedMethodName`).
   */
  explore(builtIns: ReadonlySet<object> = NO_BUILT_INS): RpcMethodRegistry {
    const problems = new OptionProblems();
    const definitions: RpcMethodDraft[] = [];
    const owners = new Map<string, string>();
    const global = this.globalEnhancers();
    const seen = new Set<unknown>();

    for (const wrapper of [...this.discovery.getControllers(), ...this.discovery.getProviders()]) {
      const prototype = this.prototypeOf(wrapper);
      if (!prototype || seen.has(prototype)) continue;
      seen.add(prototype);
      for (const methodKey of this.scanner.getAllMethodNames(prototype)) {
        const handler = prototype[methodKey] as (...args: unknown[]) => unknown;
        const meta = this.metadata.getMethodMetadata(handler);
        if (!meta) continue;
        const where = `${prototype.constructor.name}.${methodKey}`;
        const builtIn = builtIns.has(prototype.constructor);
        const definition = this.define(wrapper, prototype, methodKey, handler, meta.name, meta.options, where, global, problems, builtIn);
        if (!definition) continue;
        const previous = owners.get(definition.name);
        if (previous) problems.push(`duplicate method name "${definition.name}" on ${previous} and ${where}`);
        else owners.set(definition.name, where);
        if (definition.stream?.durable && !this.options.durable.enabled) {
          problems.push(`${where} ("${definition.name}") is a durable stream (@RpcStream({ durable: true })) but durable streams are disabled: set durable: { enabled: true } in JsonRpcModule options`);
        }
        definitions.push(definition);
      }
    }
    this.checkStreamMethods(definitions, problems);
    if (problems.size) throw new RpcStartupError(problems.list);
    this.logger.log(`Mapped ${definitions.length} JSON-RPC method(s) on POST ${this.options.path}`);
    const described = describeMethods(definitions, this.options.params.rejectUnknown, this.logger);
    return new RpcMethodRegistry(described.definitions, described.components);
  }

  private define(
    wrapper: InstanceWrapper,
    prototype: Record<string, unknown>,
    methodKey: string,
    handler: (...args: unknown[]) => unknown,
    name: string,
    options: RpcMethodOptions,
    where: string,
    global: { any: boolean; filters: boolean },
    problems: OptionProblems,
    builtIn: boolean,
  ): RpcMethodDraft | undefined {
    const before = problems.size;
    if (typeof name !== 'string' || name.length === 0) problems.push(`${where}: @RpcMethod needs a non-empty name`);
    else if (isReservedMethodName(name) && !builtIn) problems.push(`${where}: method name "${name}" is reserved (names starting with "rpc." belong to the protocol)`);
    checkMethodOptions(options, `${where} ("${name}")`, problems);
    if (problems.size > before) return undefined;

    const rejectUnknown = options.rejectUnknown ?? this.options.params.rejectUnknown;
    const classRef = prototype.constructor as object;
    const customParams = this.metadata.getCustomParams(classRef, methodKey);
    const paramPlan = new ParamPlan({
      method: name,
      paramTypes: this.metadata.getParamTypes(prototype, methodKey),
      args: this.metadata.getArgsMetadata(classRef, methodKey),
      externalArgs: customParams.map((p) => p.index),
      rejectUnknown,
      allowPositional: options.allowPositional ?? false,
      contextClass: RpcContext,
    });
    this.checkClaimedKeys(paramPlan, `${where} ("${name}")`, problems);

    const local = this.metadata.getLocalEnhancers(classRef, handler);
    const isScoped = !wrapper.isDependencyTreeStatic();
    const deprecated = options.deprecated;
    const stream = this.metadata.getStreamMetadata(handler);
    const effective = resolveEffectiveRoles(name, options, this.options.security);
    const rateLimit = this.metadata.getRateLimitMetadata(handler);
    const cache = this.metadata.getCacheMetadata(handler);
    const mcp = this.metadata.getMcpMetadata(handler);
    if (stream) checkStreamOptions(stream, `"${name}" (${where})`, problems);
    checkRateLimitOptions(rateLimit, `${where} ("${name}")`, problems);
    checkCacheOptions(cache, `${where} ("${name}")`, problems);
    checkMcpOptions(mcp, `${where} ("${name}")`, problems);
    return {
      name,
      options: Object.freeze({ ...options }),
      wrapper,
      instance: isScoped ? undefined : (wrapper.instance as object),
      classRef,
      methodKey,
      handler,
      paramPlan,
      customParams,
      isScoped,
      hasEnhancers: local.any || global.any,
      hasFilters: local.filters || global.filters,
      roles: effective.roles,
      rolesMatch: effective.rolesMatch,
      rolesSource: effective.source,
      rateLimit: rateLimit && !this.metadata.isThrottleSkipped(classRef, handler, RPC_THROTTLER_NAME) ? Object.freeze({ ...rateLimit }) : undefined,
      cache: cache ? Object.freeze({ ...cache, tags: cache.tags ? Object.freeze([...cache.tags]) : undefined }) : undefined,
      stream: stream ? Object.freeze({ ...stream, format: stream.format ?? StreamFormat.Ndjson }) : undefined,
      mcp: mcp ? Object.freeze({ ...mcp, annotations: mcp.annotations ? Object.freeze({ ...mcp.annotations }) : undefined }) : undefined,
      deprecation: deprecated ? (typeof deprecated === 'string' ? `${name}: ${deprecated}` : name) : undefined,
    };
  }

  /**
   * Live stream methods need the stream route (one problem naming them all), and no `@RpcCache`:
   * a stream has no single result to cache. Durable streams run through `path`.
   */
  private checkStreamMethods(definitions: readonly RpcMethodDraft[], problems: OptionProblems): void {
    const needRoute: string[] = [];
    for (const definition of definitions) {
      const stream = definition.stream;
      if (!stream) continue;
      const where = `"${definition.name}" (${(definition.classRef as { name: string }).name}.${definition.methodKey})`;
      if (definition.cache !== undefined) {
        problems.push(`${where}: @RpcStream and @RpcCache cannot be combined (a stream has no single result to cache)`);
      }
      if (!stream.durable && !this.options.stream.enabled) needRoute.push(where);
    }
    if (needRoute.length) {
      problems.push(
        `@RpcStream method(s) ${needRoute.join(', ')} need the stream route, which is disabled: ` +
          `set JsonRpcModule.forRoot({ stream: { enabled: true } })`,
      );
    }
  }

  private checkClaimedKeys(plan: ParamPlan, where: string, problems: OptionProblems): void {
    const claimedBy = new Map<string, number>();
    for (const { argIndex, keys } of plan.claimedKeys()) {
      for (const key of keys) {
        const other = claimedBy.get(key);
        if (other !== undefined && other !== argIndex) {
          problems.push(`${where}: params key "${key}" is claimed by both argument ${other} and argument ${argIndex}`);
        }
        claimedBy.set(key, argIndex);
      }
    }
  }

  private prototypeOf(wrapper: InstanceWrapper): Record<string, unknown> | undefined {
    if (wrapper.isAlias) return undefined;
    if (!wrapper.isNotMetatype && typeof wrapper.metatype === 'function') return wrapper.metatype.prototype;
    const instance = wrapper.instance as object | undefined;
    return instance && typeof instance === 'object' ? Object.getPrototypeOf(instance) : undefined;
  }

  /** Global enhancers (`app.useGlobal*()` and `APP_*` providers) apply to every call. */
  private globalEnhancers(): { any: boolean; filters: boolean } {
    const config = (this.contextCreator as unknown as { container?: { applicationConfig?: ApplicationConfig } }).container
      ?.applicationConfig;
    if (!config) return { any: false, filters: false };
    const filters = config.getGlobalFilters().length + config.getGlobalRequestFilters().length > 0;
    const others =
      config.getGlobalGuards().length +
        config.getGlobalRequestGuards().length +
        config.getGlobalInterceptors().length +
        config.getGlobalRequestInterceptors().length +
        config.getGlobalPipes().length +
        config.getGlobalRequestPipes().length >
      0;
    return { any: filters || others, filters };
  }
}
