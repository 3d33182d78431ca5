import { ContextIdFactory, ExternalContextCreator, ModuleRef } from '@nestjs/core';
import { isObservable, lastValueFrom } from 'rxjs';
import type { RpcContext } from '../context/rpc-context.js';
import type { RpcMethodDefinition } from '../registry/rpc-method-definition.js';
import { RpcMetadataAccessor } from '../registry/rpc-metadata-accessor.js';
import { CheckedRows, checkedResult } from './result-check.js';
import type { RpcCallSteps, RpcCallTarget } from './rpc-call-steps.js';
import { boxingStreamHandler, isPromiseLike, wrapStreamSource } from './stream-source.js';

/** Where handler arguments are declared for Nest's param pipeline (our own key, written at startup). */
export const RPC_PIPELINE_ARGS_METADATA = 'nest-jsonrpc:pipeline-args';

/** A metadata key nothing is declared under: the guards-only chain resolves no handler arguments. */
const RPC_NO_ARGS_METADATA = 'nest-jsonrpc:no-args';

type ChainedHandler = (...args: unknown[]) => Promise<unknown>;

/**
 * Stands in for the handler in the guards-only chain: carries all of the handler's metadata (so
 * guards reading `context.getHandler()` see `@Roles`, `@SkipThrottle`...) and does nothing.
 */
function guardProbe(handler: (...args: unknown[]) => unknown): (...args: unknown[]) => unknown {
  const probe = function () {
    return undefined;
  };
  Object.defineProperty(probe, 'name', { value: handler.name });
  RpcMetadataAccessor.copyHandlerMetadata(handler, probe);
  return probe;
}

/**
 * Feeds Nest's param pipeline: argument i of the handler is item i of the call's resolved args.
 * Resolution happens lazily inside the pipeline, i.e. after guards and interceptors, as in Nest.
 * Arguments still being validated (an async schema) are handed over as a Promise, which Nest's
 * param pipeline settles before any pipe sees the value (as for an async custom decorator).
 */
const pipelineParamsFactory = {
  exchangeKeyForValue(_type: number, index: number, args: unknown[]): unknown {
    const resolved = (args[2] as RpcContext).resolveArgs();
    return Array.isArray(resolved) ? resolved[index] : resolved.then((all) => all[index]);
  },
};

/**
 * The handler as Nest's chain calls it when it takes the `RpcContext`: the context arrives in an
 * extra slot after every parameter the handler declares (`firstSlot`, see `declarePipelineArgs`)
 * and is put back where the handler declared it. The wrapper carries the handler's metadata
 * (guards and interceptors read `getHandler()`).
 */
function contextFromSlots(handler: (...args: unknown[]) => unknown, argumentCount: number, firstSlot: number, contextArgs: readonly number[]): (...args: unknown[]) => unknown {
  const placed = function (this: unknown, ...args: unknown[]): unknown {
    const own = args.slice(0, argumentCount);
    for (let slot = 0; slot < contextArgs.length; slot++) own[contextArgs[slot]] = args[firstSlot + slot];
    return handler.apply(this, own);
  };
  RpcMetadataAccessor.copyHandlerMetadata(handler, placed);
  Object.defineProperty(placed, 'name', { value: handler.name });
  return placed;
}

/**
 * A method runs through Nest's chain when guards, interceptors, pipes or filters apply, or when a
 * parameter has a custom decorator (`createParamDecorator`): Nest's param pipeline runs its factory.
 */
export function needsNestChain(definition: RpcMethodDefinition): boolean {
  return definition.hasEnhancers || definition.customParams.length > 0;
}

/**
 * Runs one call of one method. Three shapes, chosen at startup:
 * - direct: no enhancers anywhere, singleton provider — resolve params and call, nothing else;
 * - chained: through `ExternalContextCreator` so guards, interceptors, pipes and filters apply;
 * - scoped: like chained, on an instance resolved for the HTTP request's context id.
 * Returns the handler's value (a Promise or Observable is settled to its value) or throws.
 * A stream method's value comes back boxed (`StreamSourceBox`), its Observable unsettled.
 *
 * With built-in steps (roles, `@RpcRateLimit`, `@RpcCache`) the call runs: the app's guards (so an auth
 * guard can set `request.user` first) -> roles -> rate limit -> cache -> interceptors -> pipes ->
 * handler. The guards then run as their own chain and the main chain runs without them; a method
 * without enhancers runs the steps directly, with no Observable chain at all.
 */
export class RpcMethodInvoker implements RpcCallTarget {
  private readonly chained: ChainedHandler | undefined;
  private readonly guardsOnly: ChainedHandler | undefined;
  private probe: ((...args: unknown[]) => unknown) | undefined;
  /**
   * The function called: the handler itself, or for a stream method a wrapper that boxes its
   * iterable/Observable so Nest's chain does not settle it to a last value (see stream-source.ts).
   */
  private readonly handler: (...args: unknown[]) => unknown;
  /** The function Nest's chain calls: `handler`, or for a handler taking the context, `contextFromSlots`' wrapper of it. */
  private readonly chainedCallback: (...args: unknown[]) => unknown;

  constructor(
    readonly definition: RpcMethodDefinition,
    private readonly contextCreator: ExternalContextCreator,
    private readonly moduleRef: ModuleRef,
    readonly steps?: RpcCallSteps,
  ) {
    this.handler = definition.stream ? boxingStreamHandler(definition.handler) : definition.handler;
    const { argumentCount, parameterCount, contextArgs } = definition.paramPlan;
    this.chainedCallback = contextArgs.length > 0 ? contextFromSlots(this.handler, argumentCount, parameterCount, contextArgs) : this.handler;
    const chained = needsNestChain(definition);
    if (chained || definition.isScoped) this.declarePipelineArgs();
    if (chained && !definition.isScoped) {
      this.chained = this.createChained(definition.instance!, undefined, steps === undefined);
      if (steps && definition.hasEnhancers) this.guardsOnly = this.createGuardsOnly(definition.instance!, undefined);
    }
  }

  invoke(ctx: RpcContext): unknown {
    const steps = this.steps;
    if (steps === undefined) return this.invokeHandler(ctx);
    if (this.definition.isScoped) return this.invokeScopedWithSteps(ctx, steps);
    if (this.guardsOnly === undefined) return steps.run(ctx, this);
    const exchange = ctx.exchange;
    return this.guardsOnly(exchange.request, exchange.reply, ctx).then(() => steps.run(ctx, this));
  }

  /**
   * Everything after the built-in steps: interceptors, pipes and the handler (or just the handler);
   * under `validateResults`, the value (or each row) then checked against the method's schema.
   */
  invokeHandler(ctx: RpcContext): unknown {
    const { resultCheck, rowCheck, name } = this.definition;
    if (resultCheck !== undefined) return checkedResult(resultCheck, name, this.invokeUnchecked(ctx));
    if (rowCheck === undefined) return this.invokeUnchecked(ctx);
    const check = (value: unknown) => wrapStreamSource(value, (source) => new CheckedRows(source, rowCheck, name));
    const value = this.invokeUnchecked(ctx);
    return isPromiseLike(value) ? value.then(check) : check(value);
  }

  private invokeUnchecked(ctx: RpcContext): unknown {
    const definition = this.definition;
    if (definition.isScoped) return this.invokeScoped(ctx);
    if (this.chained) {
      const result = this.chained(ctx.exchange.request, ctx.exchange.reply, ctx);
      // An exception filter's answer is returned as is, and may be an Observable (the microservice
      // style `throwError(() => ...)`); Nest settles only the handler's and interceptors' values.
      return definition.hasFilters ? settleAsync(result) : result;
    }
    const args = ctx.resolveArgs();
    if (!Array.isArray(args)) return args.then((settled) => settleAsync(this.handler.apply(definition.instance, settled)));
    const result = this.handler.apply(definition.instance, args);
    if (isPromiseLike(result)) return settleAsync(result as Promise<unknown>);
    if (isObservable(result)) return lastValueFrom(result, { defaultValue: undefined });
    return result;
  }

  private async invokeScoped(ctx: RpcContext): Promise<unknown> {
    const exchange = ctx.exchange;
    const instance = await this.scopedInstance(ctx);
    const chained = this.createChained(instance, exchange.contextId, this.steps === undefined);
    const result = chained(exchange.request, exchange.reply, ctx);
    return this.definition.hasFilters ? settleAsync(result) : result;
  }

  private async invokeScopedWithSteps(ctx: RpcContext, steps: RpcCallSteps): Promise<unknown> {
    const exchange = ctx.exchange;
    if (this.definition.hasEnhancers) {
      const instance = await this.scopedInstance(ctx);
      await this.createGuardsOnly(instance, exchange.contextId)(exchange.request, exchange.reply, ctx);
    }
    return steps.run(ctx, this);
  }

  private async scopedInstance(ctx: RpcContext): Promise<object> {
    const exchange = ctx.exchange;
    if (!exchange.contextId) {
      exchange.contextId = ContextIdFactory.getByRequest(exchange.request);
      this.moduleRef.registerRequestByContextId(exchange.request, exchange.contextId);
    }
    return (await this.moduleRef.resolve(this.definition.wrapper.token as never, exchange.contextId, { strict: false })) as object;
  }

  private createChained(instance: object, contextId: Parameters<ExternalContextCreator['create']>[5], guards = true): ChainedHandler {
    const { definition } = this;
    return this.contextCreator.create(
      instance,
      this.chainedCallback,
      definition.methodKey,
      RPC_PIPELINE_ARGS_METADATA,
      pipelineParamsFactory,
      contextId,
      contextId ? definition.wrapper.id : undefined,
      { guards, interceptors: true, filters: definition.hasFilters },
      'http',
    ) as ChainedHandler;
  }

  /** The app's guards (global, class, method) alone, with its exception filters around them. */
  private createGuardsOnly(instance: object, contextId: Parameters<ExternalContextCreator['create']>[5]): ChainedHandler {
    const { definition } = this;
    return this.contextCreator.create(
      instance,
      (this.probe ??= guardProbe(definition.handler)),
      definition.methodKey,
      RPC_NO_ARGS_METADATA,
      undefined,
      contextId,
      contextId ? definition.wrapper.id : undefined,
      { guards: true, interceptors: false, filters: definition.hasFilters },
      'http',
    ) as ChainedHandler;
  }

  /**
   * Declares every handler argument to Nest's param pipeline with type "custom", so pipes see
   * each one (with its metatype) while Nest's ValidationPipe leaves them alone by default —
   * validation already happened against the DTO. Custom decorators (`createParamDecorator`) are
   * declared as Nest declared them, so their factories and pipes run as on a controller.
   *
   * The `RpcContext` is declared in a slot after the handler's own arguments, where the handler's
   * `design:paramtypes` give it no metatype: pipes see it (data: its index) as a value of no
   * declared type, which a ValidationPipe passes on as is even with `validateCustomDecorators` —
   * with its metatype (`RpcContext`, or `Function` for `import type`) the pipe validated it, and
   * class-transformer's copy of the context threw: every call of a method taking it answered
   * -32603. `contextFromSlots` puts it back in its place.
   */
  private declarePipelineArgs(): void {
    const { definition } = this;
    const args: Record<string, unknown> = {};
    const { argumentCount, parameterCount, externalArgs, contextArgs } = definition.paramPlan;
    const external = new Set(externalArgs);
    const contexts = new Set(contextArgs);
    for (let i = 0; i < argumentCount; i++) {
      if (!external.has(i) && !contexts.has(i)) args[`custom:${i}`] = { index: i, data: i, pipes: [] };
    }
    contextArgs.forEach((index, slot) => {
      args[`custom:${parameterCount + slot}`] = { index: parameterCount + slot, data: index, pipes: [] };
    });
    for (const param of definition.customParams) args[param.key] = param.entry;
    Reflect.defineMetadata(RPC_PIPELINE_ARGS_METADATA, args, definition.classRef, definition.methodKey);
  }
}

async function settleAsync(promise: unknown): Promise<unknown> {
  const value = await promise;
  return isObservable(value) ? lastValueFrom(value, { defaultValue: undefined }) : value;
}
