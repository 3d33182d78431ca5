import type { RpcId } from '@nest-jsonrpc/protocol';
import type { RpcTransport } from '../context/rpc-context.js';

/** The instrumentation scope of every span and metric the module records. */
export const INSTRUMENTATION_SCOPE = '@nest-jsonrpc/server';

/** The events emitted through `@nestjs/event-emitter` when the app has it (`observability.events`). */
export const JsonRpcEvent = Object.freeze({
  CallSucceeded: 'jsonrpc.call.succeeded',
  CallFailed: 'jsonrpc.call.failed',
  StreamStarted: 'jsonrpc.stream.started',
  StreamFinished: 'jsonrpc.stream.finished',
  DurableStarted: 'jsonrpc.durable.started',
  DurableFinished: 'jsonrpc.durable.finished',
} as const);

/** What every call event carries. Never the params. */
export interface RpcCallEventBase {
  readonly method: string;
  readonly transport: RpcTransport;
  /** The JSON-RPC id; undefined for a notification. */
  readonly id: RpcId | undefined;
  readonly isNotification: boolean;
  /** `X-Request-Id` of the HTTP request (shared by a batch's items). */
  readonly requestId: string;
}

/** `jsonrpc.call.succeeded`: the handler returned (for a stream method: its rows are about to flow). */
export interface RpcCallSucceededEvent extends RpcCallEventBase {
  readonly durationMs: number;
}

/** `jsonrpc.call.failed`: what the client is (or, for a notification, would be) answered. */
export interface RpcCallFailedEvent extends RpcCallEventBase {
  readonly durationMs: number;
  /** The error object's integer code. */
  readonly code: number;
  readonly message: string;
  /** For -32603 only: what was thrown (never sent to the client), so a listener can report it. */
  readonly cause?: unknown;
}

/** How a stream (live or durable) ended. */
export type RpcStreamEnding = 'completed' | 'error' | 'client_gone' | 'cancelled';

/** `jsonrpc.stream.started`: a live stream's first row is about to be pulled. */
export type RpcStreamStartedEvent = RpcCallEventBase;

/** `jsonrpc.stream.finished`: a live stream ended. */
export interface RpcStreamFinishedEvent extends RpcCallEventBase {
  readonly durationMs: number;
  readonly rows: number;
  /** `completed`, `error` (an error frame ended it: see `code`) or `client_gone`. */
  readonly ending: RpcStreamEnding;
  readonly code?: number;
  /** For -32603 only: what the producer threw. */
  readonly cause?: unknown;
}

/** `jsonrpc.durable.started`: a durable stream's producer began. */
export interface RpcDurableStartedEvent extends RpcCallEventBase {
  readonly streamId: string;
}

/** `jsonrpc.durable.finished`: a durable stream's producer ended (`cancelled`: cancelled or interrupted). */
export interface RpcDurableFinishedEvent extends RpcDurableStartedEvent {
  readonly durationMs: number;
  readonly rows: number;
  readonly ending: RpcStreamEnding;
  readonly code?: number;
  readonly cause?: unknown;
}
