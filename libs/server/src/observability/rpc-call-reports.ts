import type { Logger } from '@nestjs/common';
import { RpcErrorCode } from '@nest-jsonrpc/protocol';
import type { RpcErrorMapping } from '../errors/rpc-exception-mapper.js';
import type { RpcCallLogging } from '../options/observability-options.js';
import type { RpcResolvedCall } from '../pipeline/rpc-resolved-call.js';
import { isPromiseLike } from '../pipeline/stream-source.js';
import { JsonRpcEvent, type RpcCallEventBase, type RpcStreamEnding } from './rpc-events.js';

/** What `EventEmitter2` offers that we use (the app's emitter, found at bootstrap). */
export interface RpcEventSink {
  emit(event: string, payload: unknown): unknown;
}

/**
 * The Nest events (`JsonRpcEvent`, through the app's `EventEmitter2`) and the call logs
 * (`logCalls`) of calls and streams. Never a params value. A failure is logged here once, at the
 * `log` level — except one with a cause to log (a -32603 the mapper made), which the transport
 * logs with its stack when it answers (`RpcExceptionMapper.toErrorObject`).
 */
export class RpcCallReports {
  /** Whether anything is reported for a success (an event or an access log line). */
  readonly reportsSuccess: boolean;
  readonly logsErrors: boolean;
  private readonly logAll: boolean;

  constructor(
    private readonly events: RpcEventSink | undefined,
    private readonly logger: Logger,
    logCalls: RpcCallLogging,
  ) {
    this.logAll = logCalls === 'all';
    this.logsErrors = logCalls !== 'none';
    this.reportsSuccess = events !== undefined || this.logAll;
  }

  succeeded(call: RpcResolvedCall, durationMs: number): void {
    if (this.events) this.emit(JsonRpcEvent.CallSucceeded, { ...eventBase(call), durationMs });
    if (this.logAll) this.logger.log(`call succeeded ${logFields(call)} durationMs=${round(durationMs)}`);
  }

  failed(call: RpcResolvedCall, mapping: RpcErrorMapping, thrown: unknown, durationMs: number): void {
    const { error } = mapping;
    if (this.events) {
      const cause = error.code === RpcErrorCode.InternalError ? { cause: thrown } : undefined;
      this.emit(JsonRpcEvent.CallFailed, { ...eventBase(call), durationMs, code: error.code, message: error.message, ...cause });
    }
    if (this.logsErrors) this.logFailure(`call failed ${logFields(call)} code=${error.code} durationMs=${round(durationMs)}`, mapping);
  }

  /** The handler's value is no stream (a programming error, answered -32603 before any row). */
  streamUnusable(call: RpcResolvedCall, mapping: RpcErrorMapping): void {
    if (this.logsErrors) this.logFailure(`stream unusable ${logFields(call)} code=${mapping.error.code}`, mapping);
  }

  /** A live stream's rows are about to flow, or (`streamId`) a durable stream's producer begins. */
  streamStarted(call: RpcResolvedCall, streamId: string | undefined): void {
    if (!this.events) return;
    if (streamId !== undefined) this.emit(JsonRpcEvent.DurableStarted, { ...eventBase(call), streamId });
    else this.emit(JsonRpcEvent.StreamStarted, eventBase(call));
  }

  streamEnded(
    call: RpcResolvedCall,
    streamId: string | undefined,
    outcome: { rows: number; ending: RpcStreamEnding; durationMs: number; failure: RpcErrorMapping | undefined; thrown: unknown },
  ): void {
    const { rows, ending, durationMs, failure: mapping, thrown } = outcome;
    const error = mapping?.error;
    const durable = streamId !== undefined;
    if (this.events) {
      const base = durable ? { ...eventBase(call), streamId } : eventBase(call);
      const failure = error ? { code: error.code, ...(error.code === RpcErrorCode.InternalError ? { cause: thrown } : undefined) } : undefined;
      this.emit(durable ? JsonRpcEvent.DurableFinished : JsonRpcEvent.StreamFinished, { ...base, durationMs, rows, ending, ...failure });
    }
    const line = `${durable ? 'durable stream' : 'stream'} ${ending} ${logFields(call)}${durable ? ` streamId=${streamId}` : ''} rows=${rows}`;
    if (mapping) {
      if (this.logsErrors) this.logFailure(`${line} code=${mapping.error.code} durationMs=${round(durationMs)}`, mapping);
    } else if (this.logAll) this.logger.log(`${line} durationMs=${round(durationMs)}`);
  }

  /** A listener's failure is logged and changes nothing for the call. */
  private emit(event: string, payload: object): void {
    try {
      const result = this.events!.emit(event, payload);
      if (isPromiseLike(result)) result.then(undefined, (error: unknown) => this.listenerFailed(event, error));
    } catch (error) {
      this.listenerFailed(event, error);
    }
  }

  private listenerFailed(event: string, error: unknown): void {
    this.logger.error(`A listener of ${event} failed: ${error instanceof Error ? error.message : String(error)}`, error instanceof Error ? error.stack : undefined);
  }

  /**
   * One line per failure, at the `log` level: the server did its job (a client error, a refusal,
   * an error the app chose). A failure with a cause to log (a -32603 the mapper made) is logged
   * where the transport answers it, by the exception mapper (`Unhandled error in <method>: ...`,
   * error level, with the stack): that line is the call's, not a second one.
   */
  private logFailure(line: string, mapping: RpcErrorMapping): void {
    if (mapping.unhandled === undefined) this.logger.log(line);
  }
}

function eventBase(call: RpcResolvedCall): RpcCallEventBase {
  const { ctx } = call;
  return { method: ctx.method, transport: ctx.transport, id: ctx.id, isNotification: ctx.isNotification, requestId: ctx.exchange.requestId };
}

function logFields(call: RpcResolvedCall): string {
  const { ctx } = call;
  const id = ctx.isNotification ? '' : ` id=${JSON.stringify(ctx.id ?? null)}`;
  return `method=${ctx.method}${id} transport=${ctx.transport} requestId=${ctx.exchange.requestId}`;
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
