import type { ArgumentsHost } from '@nestjs/common';
import type { ContextId } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RpcId, RpcParamsValue } from '@nest-jsonrpc/protocol';
import type { RolesResolver } from '../options/json-rpc-options.js';
import { callerRoles, requestUser } from './caller-identity.js';

/**
 * How a call reached the method: `/rpc` (`http`), `/rpc/stream` (`stream`), a durable stream's
 * background run (`durable`), an MCP `tools/call` (`mcp`) or an LLM tool call (`tool`).
 */
export type RpcTransport = 'http' | 'stream' | 'durable' | 'mcp' | 'tool';

/** Turns a call's params into the handler's arguments (the method's param plan, built at startup). */
export interface RpcArgsResolver {
  resolve(params: RpcParamsValue | undefined, ctx: RpcContext): unknown[];
}

/**
 * State of one HTTP request shared by every call it carries (one, or each item of a batch):
 * the request id, the abort signal, and what the response headers must say afterwards.
 */
export class RpcHttpExchange {
  /** Highest HTTP status any item asked for (used when `httpStatus.enabled`). */
  status = 200;
  /** Largest `retryAfter` (seconds) among rate-limited items; 0 when none. */
  retryAfter = 0;
  /** `<method>: <reason>` of every deprecated method called. */
  deprecations: string[] | undefined;
  /** Nest context id, created on first use by a request-scoped handler. */
  contextId: ContextId | undefined;
  private abortController: AbortController | undefined;
  private resolvedRoles: readonly string[] | undefined;
  /** `request.user` when the roles were resolved: a guard of a later batch item may still set it. */
  private rolesResolvedFor: unknown;

  constructor(
    readonly request: FastifyRequest,
    readonly reply: FastifyReply,
    readonly requestId: string,
    private readonly rolesResolver: RolesResolver | undefined,
  ) {}

  /** Aborted when the client goes away before the response is complete. Created on first use. */
  get signal(): AbortSignal {
    if (this.abortController) return this.abortController.signal;
    const controller = (this.abortController = new AbortController());
    const res = this.reply.raw;
    const onClose = () => {
      if (!res.writableFinished) controller.abort(new Error('Client disconnected'));
    };
    if (res.destroyed) onClose();
    else res.once('close', onClose);
    return controller.signal;
  }

  /**
   * Aborts `signal` now (a stream whose client left, or a server shutdown). Idempotent; creates an
   * already-aborted signal when nobody has asked for one yet.
   */
  abort(reason: unknown): void {
    const controller = (this.abortController ??= new AbortController());
    if (!controller.signal.aborted) controller.abort(reason);
  }

  get roles(): readonly string[] {
    const user = requestUser(this.request);
    if (this.resolvedRoles && this.rolesResolvedFor === user) return this.resolvedRoles;
    this.rolesResolvedFor = user;
    return (this.resolvedRoles = callerRoles(this.request, this.rolesResolver));
  }

  /** Notes a deprecated method's `X-Rpc-Deprecated` value (once per value). */
  noteDeprecation(value: string): void {
    const seen = (this.deprecations ??= []);
    if (!seen.includes(value)) seen.push(value);
  }

  /** The response's `Retry-After` is the largest `retryAfter` of the rate-limited items. */
  noteRetryAfter(seconds: number): void {
    if (seconds > this.retryAfter) this.retryAfter = seconds;
  }
}

/**
 * Everything a handler may want to know about the call it serves. `TUser` types `user`
 * (`RpcContext<AppUser>`), as the app's auth guard sets it.
 */
export class RpcContext<TUser = any> {
  private resolvedArgs: unknown[] | undefined;

  constructor(
    readonly method: string,
    /** The request's id; `undefined` for a notification. */
    readonly id: RpcId | undefined,
    readonly params: RpcParamsValue | undefined,
    readonly isNotification: boolean,
    readonly transport: RpcTransport,
    /** @internal the HTTP request this call came in */
    readonly exchange: RpcHttpExchange,
    /** @internal how this call's params become handler arguments */
    readonly argsResolver: RpcArgsResolver,
    /** @internal the call's own signal, when it is not the HTTP request's (a durable run) */
    private readonly ownSignal?: AbortSignal,
  ) {}

  /** `X-Request-Id` of the HTTP request, or one generated for it; shared by a batch's items. */
  get requestId(): string {
    return this.exchange.requestId;
  }

  /** The Fastify request. */
  get request(): FastifyRequest {
    return this.exchange.request;
  }

  /** `request.user`, as Passport and most auth guards set it (else the raw request's, set by middleware). */
  get user(): TUser {
    return requestUser(this.exchange.request) as TUser;
  }

  /** `request.user.roles`, or what `security.rolesResolver` returns. */
  get roles(): readonly string[] {
    return this.exchange.roles;
  }

  hasRole(role: string): boolean {
    return this.exchange.roles.includes(role);
  }

  /** Aborted when the client goes away (for a durable run: when the stream is cancelled or the server stops). */
  get signal(): AbortSignal {
    return this.ownSignal ?? this.exchange.signal;
  }

  /**
   * @internal The handler's arguments, resolved (and validated) once per call. Nest's param
   * pipeline reads them one index at a time; the direct path takes them all at once.
   */
  resolveArgs(): unknown[] {
    return (this.resolvedArgs ??= this.argsResolver.resolve(this.params, this));
  }
}

/**
 * The RPC call behind a Nest ExecutionContext (guards, interceptors) or ArgumentsHost (exception
 * filters): `getRpcContext(context)?.method`. Undefined when the context is not a JSON-RPC call.
 */
export function getRpcContext<TUser = any>(context: ArgumentsHost): RpcContext<TUser> | undefined {
  const candidate = context.getArgByIndex(2);
  return candidate instanceof RpcContext ? candidate : undefined;
}
