import { ContextIdFactory, ExternalContextCreator, ModuleRef } from '@nestjs/core';
import { isObservable, lastValueFrom } from 'rxjs';
import type { RpcMethodDefinition } from '../registry/rpc-method-definition.js';
import { boxingStreamHandler } from '../streaming/stream-source.js';
import { RpcContext } from './rpc-context.js';

/** Where handler arguments are declared for Nest's param pipeline (our own key, written at startup). */
export const RPC_PIPELINE_ARGS_METADATA = 'nest-jsonrpc:pipeline-args';

type ChainedHandler = (...args: unknown[]) => Promise<unknown>;

/**
 * Feeds Nest's param pipeline: argument i of the handler is item i of the call's resolved args.
 * Resolution happens lazily inside the pipeline, i.e. after guards and interceptors, as in Nest.
 */
const pipelineParamsFactory = {
  exchangeKeyForValue(_type: number, index: number, args: unknown[]): unknown {
    return (args[2] as RpcContext).resolveArgs()[index];
  },
};

/**
 * Runs one call of one method. Three shapes, chosen at startup:
 * - direct: no enhancers anywhere, singleton provider — resolve params and call, nothing else;
 * - chained: through `ExternalContextCreator` so guards, interceptors, pipes and filters apply;
 * - scoped: like chained, on an instance resolved for the HTTP request's context id.
 * Returns the handler's value (a Promise or Observable is settled to its value) or throws.
 * A stream method's value comes back boxed (`StreamSourceBox`), its Observable unsettled.
 */
export class RpcMethodInvoker {
  private readonly chained: ChainedHandler | undefined;
  /**
   * The function called: the handler itself, or for a stream method a wrapper that boxes its
   * iterable/Observable so Nest's chain does not settle it to a last value (see streaming/).
   */
  private readonly handler: (...args: unknown[]) => unknown;

  constructor(
    readonly definition: RpcMethodDefinition,
    private readonly contextCreator: ExternalContextCreator,
    private readonly moduleRef: ModuleRef,
  ) {
    this.handler = definition.stream ? boxingStreamHandler(definition.handler) : definition.handler;
    if (definition.hasEnhancers || definition.isScoped) this.declarePipelineArgs();
    if (definition.hasEnhancers && !definition.isScoped) {
      this.chained = this.createChained(definition.instance!, undefined);
    }
  }

  invoke(ctx: RpcContext): unknown {
    const definition = this.definition;
    if (definition.isScoped) return this.invokeScoped(ctx);
    if (this.chained) {
      const result = this.chained(ctx.exchange.request, ctx.exchange.reply, ctx);
      // An exception filter's answer is returned as is, and may be an Observable (the microservice
      // style `throwError(() => ...)`); Nest settles only the handler's and interceptors' values.
      return definition.hasFilters ? settleAsync(result) : result;
    }
    const result = this.handler.apply(definition.instance, ctx.resolveArgs());
    if (result !== null && typeof result === 'object') {
      if (typeof (result as PromiseLike<unknown>).then === 'function') return settleAsync(result as Promise<unknown>);
      if (isObservable(result)) return lastValueFrom(result, { defaultValue: undefined });
    }
    return result;
  }

  private async invokeScoped(ctx: RpcContext): Promise<unknown> {
    const exchange = ctx.exchange;
    if (!exchange.contextId) {
      exchange.contextId = ContextIdFactory.getByRequest(exchange.request);
      this.moduleRef.registerRequestByContextId(exchange.request, exchange.contextId);
    }
    const instance = await this.moduleRef.resolve(this.definition.wrapper.token as never, exchange.contextId, { strict: false });
    const chained = this.createChained(instance as object, exchange.contextId);
    const result = chained(exchange.request, exchange.reply, ctx);
    return this.definition.hasFilters ? settleAsync(result) : result;
  }

  private createChained(instance: object, contextId: Parameters<ExternalContextCreator['create']>[5]): ChainedHandler {
    const { definition } = this;
    return this.contextCreator.create(
      instance,
      this.handler,
      definition.methodKey,
      RPC_PIPELINE_ARGS_METADATA,
      pipelineParamsFactory,
      contextId,
      contextId ? definition.wrapper.id : undefined,
      { guards: true, interceptors: true, filters: definition.hasFilters },
      'http',
    ) as ChainedHandler;
  }

  /**
   * Declares every handler argument to Nest's param pipeline with type "custom", so pipes see
   * each one (with its metatype) while Nest's ValidationPipe leaves them alone by default —
   * validation already happened against the DTO.
   */
  private declarePipelineArgs(): void {
    const { definition } = this;
    const args: Record<string, { index: number; data: number; pipes: unknown[] }> = {};
    for (let i = 0; i < definition.paramPlan.argumentCount; i++) args[`custom:${i}`] = { index: i, data: i, pipes: [] };
    Reflect.defineMetadata(RPC_PIPELINE_ARGS_METADATA, args, definition.classRef, definition.methodKey);
  }
}

async function settleAsync(promise: Promise<unknown>): Promise<unknown> {
  const value = await promise;
  return isObservable(value) ? lastValueFrom(value, { defaultValue: undefined }) : value;
}
