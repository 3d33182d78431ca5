import { Injectable, Logger } from '@nestjs/common';
import { ExternalContextCreator, ModuleRef } from '@nestjs/core';
import {
  isInvalidEnvelope,
  parseRequestEnvelope,
  RpcErrorCode,
  type RpcErrorObject,
  type RpcId,
  type RpcParamsValue,
} from '@nest-jsonrpc/protocol';
import { RpcContext, type RpcHttpExchange, type RpcTransport } from '../context/rpc-context.js';
import type { RpcMethodRegistry } from '../registry/rpc-method-registry.js';
import type { RpcAccessRule } from '../security/rpc-access-rule.js';
import type { DurableStartClaim } from './durable-call-starter.js';
import type { RpcCallObserver } from './rpc-call-observer.js';
import { RpcCallStepsFactory } from './rpc-call-steps.js';
import { RpcMethodInvoker } from './rpc-method-invoker.js';
import type { RpcResolvedCall } from './rpc-resolved-call.js';

export type { RpcResolvedCall };

/** A request refused before any method runs: an invalid envelope, or an unknown method. */
export interface RpcRejectedCall {
  readonly id: RpcId;
  readonly error: RpcErrorObject;
  /** A notification gets no answer, even to an unknown method (an invalid envelope is always answered). */
  readonly isNotification: boolean;
}

/** The runner of a call without observer: every step to the handler. */
const invokeCall = (call: RpcResolvedCall): unknown => call.invoker.invoke(call.ctx);

const METHOD_NOT_FOUND: RpcErrorObject = Object.freeze({ code: RpcErrorCode.MethodNotFound, message: 'Method not found' });

/**
 * One call, the same way on every transport (`/rpc`, `/rpc/stream`, durable runs, MCP, LLM
 * tools): `resolve` (envelope -> method -> `RpcContext`), then `run`: the app's guards -> roles
 * -> rate limit -> cache -> interceptors -> params -> handler. A transport decides only what to do
 * with the method's kind (plain, live stream, durable) and how to write the answer.
 *
 * Built at bootstrap from the frozen registry (`init`); the per-call path allocates a context
 * and little else.
 */
@Injectable()
export class RpcPipeline {
  private readonly logger = new Logger('JsonRpc');
  private invokers: ReadonlyMap<string, RpcMethodInvoker> = new Map();
  private registryRef: RpcMethodRegistry | undefined;
  private observer: RpcCallObserver | undefined;
  private durableClaim: DurableStartClaim | undefined;

  constructor(
    private readonly contextCreator: ExternalContextCreator,
    private readonly moduleRef: ModuleRef,
    private readonly steps: RpcCallStepsFactory,
  ) {}

  /** @internal called once by JsonRpcServer after the methods are explored. */
  init(registry: RpcMethodRegistry): void {
    const invokers = new Map<string, RpcMethodInvoker>();
    let guarded = 0;
    for (const definition of registry.all()) {
      const steps = this.steps.stepsFor(definition);
      if (steps) guarded++;
      invokers.set(definition.name, new RpcMethodInvoker(definition, this.contextCreator, this.moduleRef, steps));
    }
    this.invokers = invokers;
    this.registryRef = registry;
    if (guarded) this.logger.log(`${guarded} method(s) with roles, rate limits or caching; ${this.steps.describeStores()}`);
  }

  /** @internal set once at bootstrap by `observability/` when it has anything to record. */
  observeWith(observer: RpcCallObserver | undefined): void {
    this.observer = observer;
  }

  /** @internal set once at bootstrap by `durable/` when durable streams are on. */
  claimDurableStartsWith(claim: DurableStartClaim): void {
    this.durableClaim = claim;
  }

  /** The methods served (available once the app is initialised). */
  get registry(): RpcMethodRegistry {
    if (!this.registryRef) throw new Error('JsonRpcModule: the application is not initialised yet');
    return this.registryRef;
  }

  /** Envelope -> method -> context. Never throws. */
  resolve(raw: unknown, exchange: RpcHttpExchange, transport: RpcTransport): RpcResolvedCall | RpcRejectedCall {
    const envelope = parseRequestEnvelope(raw);
    if (isInvalidEnvelope(envelope)) return { id: envelope.id, error: envelope.invalid, isNotification: false };
    const id = envelope.id ?? null;
    const invoker = this.invokers.get(envelope.method);
    if (!invoker) return { id, error: METHOD_NOT_FOUND, isNotification: envelope.isNotification };
    const definition = invoker.definition;
    const ctx = new RpcContext(envelope.method, envelope.id, envelope.params, envelope.isNotification, transport, exchange, definition.paramPlan);
    return { ctx, definition, id, invoker };
  }

  /**
   * A call without an envelope (an MCP `tools/call`, an LLM tool call, a durable run): the method
   * by name, its params, the HTTP request it belongs to. Undefined for an unknown method.
   */
  callOf(
    method: string,
    params: RpcParamsValue | undefined,
    exchange: RpcHttpExchange,
    transport: RpcTransport,
    { id, signal }: { id?: RpcId; signal?: AbortSignal } = {},
  ): RpcResolvedCall | undefined {
    const invoker = this.invokers.get(method);
    if (!invoker) return undefined;
    const definition = invoker.definition;
    const ctx = new RpcContext(method, id, params, id === undefined, transport, exchange, definition.paramPlan, signal);
    return { ctx, definition, id: id ?? null, invoker };
  }

  /**
   * Runs the call through every step to the handler's value: a value, a Promise of one, or a
   * throw. A stream method's value comes back boxed (see stream-source.ts), unsettled.
   *
   * A durable start (a stream method on the `durable` transport) has one more step after the
   * handler: its stream is recorded (`DurableStartClaim`), and a refusal there is the call's failure.
   */
  run(call: RpcResolvedCall): unknown {
    const { definition, ctx } = call;
    if (definition.deprecation !== undefined) {
      ctx.exchange.noteDeprecation(definition.deprecation);
      this.logger.warn(`Deprecated JSON-RPC method called: ${definition.deprecation}`);
    }
    const observer = this.observer;
    if (ctx.transport === 'durable' && definition.stream !== undefined && this.durableClaim !== undefined) {
      return observer === undefined ? this.runClaimed(call) : observer.observe(call, this.runClaimed);
    }
    return observer === undefined ? call.invoker.invoke(ctx) : observer.observe(call, invokeCall);
  }

  /** A durable start: the handler's value once its stream is recorded. */
  private readonly runClaimed = async (call: RpcResolvedCall): Promise<unknown> => {
    const value = await call.invoker.invoke(call.ctx);
    await this.durableClaim!.claim(call, value);
    return value;
  };

  /** The roles rule of a method (undefined when it is public or unknown). */
  accessRuleOf(method: string): RpcAccessRule | undefined {
    return this.invokers.get(method)?.steps?.access;
  }
}

export function isRejectedCall(call: RpcResolvedCall | RpcRejectedCall): call is RpcRejectedCall {
  return call.error !== undefined;
}
