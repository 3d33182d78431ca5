import { Inject, Injectable, Logger } from '@nestjs/common';
import { DiscoveryService, ExternalContextCreator } from '@nestjs/core';
import type { ApplicationConfig } from '@nestjs/core';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper.js';
import { isReservedMethodName, StreamFormat } from '@nest-jsonrpc/protocol';
import { RpcContext } from '../context/rpc-context.js';
import type { RpcMethodOptions } from '../decorators/rpc-method.js';
import { isStandardSchema } from '../decorators/standard-schema.js';
import type { ResolvedDurableOptions } from '../options/durable-options.js';
import type { ResolvedJsonRpcOptions } from '../options/json-rpc-options.js';
import { OPTIONS_SECTION } from '../options/option-section-tokens.js';
import { OptionProblems } from '../options/option-checks.js';
import { ParamPlan } from '../params/param-plan.js';
import { StandardSchemaCheck } from '../params/standard-schema-check.js';
import { resolveEffectiveRoles } from '../security/effective-roles.js';
import { effectiveRateLimit } from '../throttling/default-rate-limit.js';
import { RPC_THROTTLER_NAME } from '../throttling/rpc-method-rate-limiter.js';
import { checkCacheOptions, checkMcpOptions, checkMethodOptions, checkRateLimitOptions, checkStreamOptions } from './method-option-checks.js';
import { describeMethods, type RpcMethodDraft } from './describe-methods.js';
import { RpcMetadataAccessor } from './rpc-metadata-accessor.js';
import { rpcMethodHostOf, type RpcHostMethod, type RpcMethodHost } from './rpc-method-hosts.js';
import { RpcMethodRegistry } from './rpc-method-registry.js';

const NO_BUILT_INS: ReadonlySet<object> = new Set();

/** Where a JSON Schema that describes a Standard Schema goes, by what it describes. */
const JSON_SCHEMA_OPTION: Readonly<Record<string, string>> = {
  params: '@RpcMethod(name, { jsonSchema: { params } }) or @RpcParams({ jsonSchema })',
  param: '@RpcParam(name, { jsonSchema })',
  result: '@RpcMethod(name, { jsonSchema: { result } })',
  row: '@RpcStream({ jsonSchema: { row } })',
};

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
    private readonly metadata: RpcMetadataAccessor,
    private readonly contextCreator: ExternalContextCreator,
    @Inject(OPTIONS_SECTION.path) private readonly path: string,
    @Inject(OPTIONS_SECTION.stream) private readonly streamRoute: ResolvedJsonRpcOptions['stream'],
    @Inject(OPTIONS_SECTION.params) private readonly params: ResolvedJsonRpcOptions['params'],
    @Inject(OPTIONS_SECTION.validateResults) private readonly validateResults: boolean,
    @Inject(OPTIONS_SECTION.security) private readonly security: ResolvedJsonRpcOptions['security'],
    @Inject(OPTIONS_SECTION.durable) private readonly durable: ResolvedDurableOptions,
    @Inject(OPTIONS_SECTION.rateLimit) private readonly defaultRateLimit: ResolvedJsonRpcOptions['rateLimit'],
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
      const host = rpcMethodHostOf(wrapper, this.metadata, !wrapper.isDependencyTreeStatic());
      if (!host || seen.has(host.key)) continue;
      seen.add(host.key);
      for (const problem of host.problems) problems.push(problem);
      for (const method of host.methods) {
        const meta = this.metadata.getMethodMetadata(method.declared)!;
        const where = `${host.classRef.name}.${method.methodKey}`;
        const builtIn = builtIns.has(host.classRef);
        const definition = this.define(wrapper, host, method, meta.name, meta.options, where, global, problems, builtIn);
        if (!definition) continue;
        const previous = owners.get(definition.name);
        if (previous) problems.push(`duplicate method name "${definition.name}" on ${previous} and ${where}`);
        else owners.set(definition.name, where);
        if (definition.stream?.durable && !this.durable.enabled) {
          problems.push(`${where} ("${definition.name}") is a durable stream (@RpcStream({ durable: true })) but durable streams are disabled: set durable: { enabled: true } in JsonRpcModule options`);
        }
        definitions.push(definition);
      }
    }
    this.checkStreamMethods(definitions, problems);
    if (problems.size) throw new RpcStartupError(problems.list);
    this.logger.log(`Mapped ${definitions.length} JSON-RPC method(s) on POST ${this.path}`);
    const described = describeMethods(definitions, this.params.rejectUnknown, this.logger);
    if (described.failures.length) {
      const whereOf = new Map(definitions.map((d) => [d.name, `${(d.classRef as { name: string }).name}.${d.methodKey}`]));
      throw new RpcStartupError(
        described.failures.map((f) => `${whereOf.get(f.method)} ("${f.method}"): ${f.what}: ${f.message}; or describe it with ${JSON_SCHEMA_OPTION[f.what.split(' ')[0]]}`),
      );
    }
    return new RpcMethodRegistry(described.definitions, described.components);
  }

  private define(
    wrapper: InstanceWrapper,
    host: RpcMethodHost,
    { methodKey, declared, handler }: RpcHostMethod,
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

    const rejectUnknown = options.rejectUnknown ?? this.params.rejectUnknown;
    const classRef = host.classRef;
    const customParams = this.metadata.getCustomParams(classRef, methodKey);
    const paramPlan = new ParamPlan({
      method: name,
      paramTypes: this.metadata.getParamTypes(host.prototype, methodKey),
      args: this.metadata.getArgsMetadata(classRef, methodKey),
      externalArgs: customParams.map((p) => p.index),
      rejectUnknown,
      allowPositional: options.allowPositional ?? false,
      contextClass: RpcContext,
      paramsSchema: isStandardSchema(options.params) ? options.params : undefined,
      paramsJsonSchema: options.jsonSchema?.params,
    });
    for (const problem of paramPlan.problems()) problems.push(`${where} ("${name}"): ${problem}`);
    this.checkClaimedKeys(paramPlan, `${where} ("${name}")`, problems);

    const local = this.metadata.getLocalEnhancers(classRef, declared);
    const isScoped = !wrapper.isDependencyTreeStatic();
    const deprecated = options.deprecated;
    const stream = this.metadata.getStreamMetadata(declared);
    const effective = resolveEffectiveRoles(name, options, this.security);
    const rateLimit = this.metadata.getRateLimitMetadata(declared);
    const cache = this.metadata.getCacheMetadata(declared);
    const mcp = this.metadata.getMcpMetadata(declared);
    if (stream) checkStreamOptions(stream, `"${name}" (${where})`, problems);
    if (stream && options.explorer?.signIn) problems.push(`${where} ("${name}"): option "explorer.signIn" needs a method that answers a result, not a stream`);
    checkRateLimitOptions(rateLimit, `${where} ("${name}")`, problems);
    checkCacheOptions(cache, `${where} ("${name}")`, problems);
    checkMcpOptions(mcp, `${where} ("${name}")`, problems);
    return {
      name,
      options: Object.freeze({ ...options }),
      wrapper,
      instance: host.instance,
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
      rateLimit: effectiveRateLimit(rateLimit, this.defaultRateLimit, this.metadata.isThrottleSkipped(classRef, declared, RPC_THROTTLER_NAME)),
      cache: cache ? Object.freeze({ ...cache, tags: cache.tags ? Object.freeze([...cache.tags]) : undefined }) : undefined,
      stream: stream ? Object.freeze({ ...stream, format: stream.format ?? StreamFormat.Ndjson }) : undefined,
      mcp: mcp ? Object.freeze({ ...mcp, annotations: mcp.annotations ? Object.freeze({ ...mcp.annotations }) : undefined }) : undefined,
      deprecation: deprecated ? (typeof deprecated === 'string' ? `${name}: ${deprecated}` : name) : undefined,
      resultCheck: this.validateResults && !stream && isStandardSchema(options.result) ? new StandardSchemaCheck(options.result) : undefined,
      rowCheck: this.validateResults && isStandardSchema(stream?.row) ? new StandardSchemaCheck(stream.row) : undefined,
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
      if (!stream.durable && !this.streamRoute.enabled) needRoute.push(where);
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
