import { Logger } from '@nestjs/common';
import type { StreamFormat } from '../decorators/rpc-stream.decorator.js';
import { RpcExceptionMapper } from '../errors/exception-mapper.js';
import { RpcSerializedResult } from '../caching/serialized-result.js';
import type { ResolvedJsonRpcOptions } from '../json-rpc.options.js';
import { RpcErrorCode } from '../protocol/error-codes.js';
import { isInvalidEnvelope, parseRequestEnvelope, type RpcErrorObject, type RpcId } from '../protocol/envelope.js';
import { httpStatusForCode } from '../protocol/http-status.js';
import { serializeBatch, serializeError, serializeResult, serializeSuccess } from '../protocol/response.js';
import type { RpcMethodDefinition } from '../registry/rpc-method-definition.js';
import type { DurableStreamStarter } from '../durable/durable-stream.service.js';
import { RpcContext, type RpcHttpExchange } from './rpc-context.js';
import type { RpcMethodInvoker } from './rpc-method-invoker.js';

/** One answered item: its JSON text, or undefined for a notification (which gets no answer). */
export type RpcItemOutcome = string | undefined;

/**
 * The pre-stream phase of a `<stream.path>` call: the handler's value (still boxed, see
 * streaming/stream-source.ts) with its context, or the error to answer with a plain envelope.
 */
export type RpcStreamOpening =
  | {
      readonly ctx: RpcContext;
      readonly definition: RpcMethodDefinition;
      readonly value: unknown;
      /** The durable stream being served live (sent as `X-Stream-Id`). */
      readonly streamId?: string;
      readonly error?: undefined;
    }
  | { readonly id: RpcId; readonly error: RpcErrorObject };

function isPromiseLike(value: unknown): value is Promise<unknown> {
  return value !== null && typeof value === 'object' && typeof (value as PromiseLike<unknown>).then === 'function';
}

/**
 * Turns a parsed body (one request object or a batch) into the response text. Synchronous
 * handlers are answered without allocating a Promise; batches run with bounded concurrency and
 * are answered in request order. Nothing here throws: every failure becomes an error object.
 */
export class RpcDispatcher {
  private readonly logger = new Logger('JsonRpc');
  /** Starts durable stream methods in the background instead of invoking them (set when `durable.enabled`). */
  durableStarter: DurableStreamStarter | undefined;

  constructor(
    private readonly invokers: ReadonlyMap<string, RpcMethodInvoker>,
    private readonly options: ResolvedJsonRpcOptions,
    private readonly mapper: RpcExceptionMapper = new RpcExceptionMapper(),
  ) {}

  dispatch(body: unknown, exchange: RpcHttpExchange): RpcItemOutcome | Promise<RpcItemOutcome> {
    if (!Array.isArray(body)) return this.dispatchItem(body, exchange);
    // The spec's example answers an empty batch with a bare "Invalid Request".
    if (body.length === 0) return this.errorText(null, { code: RpcErrorCode.InvalidRequest, message: 'Invalid Request' }, exchange);
    if (body.length > this.options.maxBatchSize) {
      return this.errorText(null, invalidRequest(`batch of ${body.length} exceeds the limit of ${this.options.maxBatchSize}`), exchange);
    }
    return this.dispatchBatch(body, exchange);
  }

  /** An error answer; also notes the HTTP status it calls for (used when `httpStatus.enabled`). */
  errorText(id: RpcId, error: RpcErrorObject, exchange: RpcHttpExchange): string {
    exchange.status = Math.max(exchange.status, httpStatusForCode(error.code));
    return serializeError(id, error);
  }

  private dispatchBatch(items: unknown[], exchange: RpcHttpExchange): RpcItemOutcome | Promise<RpcItemOutcome> {
    const n = items.length;
    const limit = this.options.batchConcurrency;
    const out: Array<RpcItemOutcome | Promise<RpcItemOutcome>> = new Array(n);
    const pending: number[] = [];
    let next = 0;
    while (next < n && pending.length < limit) {
      const outcome = this.dispatchItem(items[next], exchange);
      if (isPromiseLike(outcome)) pending.push(next);
      out[next++] = outcome;
    }
    if (pending.length === 0) return joinBatch(out as RpcItemOutcome[]);
    // Each pending item, once settled, becomes a worker that takes the next unstarted item.
    const work = async (index: number) => {
      out[index] = await out[index];
      while (next < n) {
        const i = next++;
        const outcome = this.dispatchItem(items[i], exchange);
        out[i] = isPromiseLike(outcome) ? await outcome : outcome;
      }
    };
    return Promise.all(pending.map(work)).then(() => joinBatch(out as RpcItemOutcome[]));
  }

  private dispatchItem(raw: unknown, exchange: RpcHttpExchange): RpcItemOutcome | Promise<RpcItemOutcome> {
    const envelope = parseRequestEnvelope(raw);
    if (isInvalidEnvelope(envelope)) return this.errorText(envelope.id, envelope.invalid, exchange);
    const { method, isNotification } = envelope;
    const id = envelope.id ?? null;
    const invoker = this.invokers.get(method);
    if (!invoker) {
      return isNotification ? undefined : this.errorText(id, { code: RpcErrorCode.MethodNotFound, message: 'Method not found' }, exchange);
    }
    const definition = invoker.definition;
    // Durable stream methods are started on this endpoint; live ones only stream on the stream route.
    if (definition.stream && !definition.stream.durable) {
      if (isNotification) return undefined;
      return this.errorText(id, invalidRequest(`"${method}" is a stream method; call it with POST ${this.options.stream.path}`), exchange);
    }
    const ctx = new RpcContext(definition.paramPlan, method, envelope.id, envelope.params, isNotification, exchange);
    if (definition.deprecation !== undefined) this.noteDeprecation(definition, exchange);
    let result: unknown;
    try {
      // Roles, rate limit and cache run inside (the invoker's RpcCallPolicy), after the app's guards.
      result = definition.stream?.durable && this.durableStarter ? this.durableStarter.start(invoker, ctx) : invoker.invoke(ctx);
    } catch (error) {
      return this.failure(id, isNotification, error, method, exchange);
    }
    if (isPromiseLike(result)) {
      return result.then(
        (value) => this.success(id, isNotification, value, method, exchange),
        (error) => this.failure(id, isNotification, error, method, exchange),
      );
    }
    return this.success(id, isNotification, result, method, exchange);
  }

  /**
   * Runs a call of the stream endpoint up to the handler's returned value: envelope, method
   * lookup, roles, then the invoker (guards, interceptors, pipes, params validation, handler).
   * `onlyFormat` restricts the methods served (the GET variant serves SSE methods only).
   * Never throws; a request without id is served like one with an id.
   */
  openStream(raw: unknown, exchange: RpcHttpExchange, onlyFormat?: StreamFormat): RpcStreamOpening | Promise<RpcStreamOpening> {
    const envelope = parseRequestEnvelope(raw);
    if (isInvalidEnvelope(envelope)) return { id: envelope.id, error: envelope.invalid };
    const { method, isNotification } = envelope;
    const id = envelope.id ?? null;
    const invoker = this.invokers.get(method);
    if (!invoker) return { id, error: { code: RpcErrorCode.MethodNotFound, message: 'Method not found' } };
    const definition = invoker.definition;
    const stream = definition.stream;
    if (!stream || (stream.durable && !this.durableStarter)) {
      return { id, error: invalidRequest(`"${method}" is not a stream method; call it with POST ${this.options.path}`) };
    }
    if (onlyFormat !== undefined && stream.format !== onlyFormat) {
      return { id, error: invalidRequest(`"${method}" streams ${stream.format}; GET serves only ${onlyFormat} methods, use POST ${this.options.stream.path}`) };
    }
    const ctx = new RpcContext(definition.paramPlan, method, envelope.id, envelope.params, isNotification, exchange);
    if (definition.deprecation !== undefined) this.noteDeprecation(definition, exchange);
    let value: unknown;
    try {
      // Roles, rate limit and cache run inside (the invoker's RpcCallPolicy), after the app's guards.
      if (stream.durable) return this.openDurableStream(invoker, ctx, definition, id, exchange);
      value = invoker.invoke(ctx);
    } catch (error) {
      return { id, error: this.streamFailure(error, method, exchange) };
    }
    if (isPromiseLike(value)) {
      return value.then(
        (settled): RpcStreamOpening => ({ ctx, definition, value: settled }),
        (error): RpcStreamOpening => ({ id, error: this.streamFailure(error, method, exchange) }),
      );
    }
    return { ctx, definition, value };
  }

  private openDurableStream(
    invoker: RpcMethodInvoker,
    ctx: RpcContext,
    definition: RpcMethodDefinition,
    id: RpcId,
    exchange: RpcHttpExchange,
  ): Promise<RpcStreamOpening> {
    return this.durableStarter!.startLive(invoker, ctx).then(
      ({ streamId, rows }): RpcStreamOpening => ({ ctx, definition, value: rows, streamId }),
      (error): RpcStreamOpening => ({ id, error: this.streamFailure(error, ctx.method, exchange) }),
    );
  }

  private streamFailure(error: unknown, method: string, exchange: RpcHttpExchange): RpcErrorObject {
    const errorObject = this.mapper.toErrorObject(error, method);
    noteRetryAfter(errorObject, exchange);
    return errorObject;
  }

  private success(id: RpcId, isNotification: boolean, value: unknown, method: string, exchange: RpcHttpExchange): RpcItemOutcome {
    if (isNotification) return undefined;
    if (value instanceof RpcSerializedResult) return serializeSuccess(id, value.json);
    let json: string;
    try {
      json = serializeResult(value);
    } catch (error) {
      return this.failure(id, false, error, method, exchange);
    }
    return serializeSuccess(id, json);
  }

  private failure(id: RpcId, isNotification: boolean, error: unknown, method: string, exchange: RpcHttpExchange): RpcItemOutcome {
    const errorObject = this.mapper.toErrorObject(error, method);
    if (isNotification) return undefined;
    noteRetryAfter(errorObject, exchange);
    return this.errorText(id, errorObject, exchange);
  }

  private noteDeprecation(definition: RpcMethodDefinition, exchange: RpcHttpExchange): void {
    const value = definition.deprecation!;
    const seen = (exchange.deprecations ??= []);
    if (!seen.includes(value)) seen.push(value);
    this.logger.warn(`Deprecated JSON-RPC method called: ${value}`);
  }
}

/** The response's `Retry-After` is the largest `retryAfter` of the rate-limited items. */
function noteRetryAfter(errorObject: RpcErrorObject, exchange: RpcHttpExchange): void {
  if (errorObject.code !== RpcErrorCode.RateLimitExceeded) return;
  const retryAfter = (errorObject.data as { retryAfter?: unknown } | undefined)?.retryAfter;
  if (typeof retryAfter === 'number' && retryAfter > exchange.retryAfter) exchange.retryAfter = retryAfter;
}

function invalidRequest(reason: string): RpcErrorObject {
  return { code: RpcErrorCode.InvalidRequest, message: `Invalid Request: ${reason}` };
}

function joinBatch(outcomes: readonly RpcItemOutcome[]): RpcItemOutcome {
  const answered = outcomes.filter((o): o is string => o !== undefined);
  return answered.length ? serializeBatch(answered) : undefined;
}
