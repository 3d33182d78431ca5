import type { ArgumentsHost } from '@nestjs/common';
import type { ContextId } from '@nestjs/core';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseQueryString, type ParsedUrlQuery } from 'node:querystring';
import type { RpcId, RpcParamsValue } from '@nest-jsonrpc/protocol';
import type { RolesResolver } from '../options/json-rpc-options.js';
import { callerRoles, requestUser } from './caller-identity.js';
import type { HttpPlatform } from './http-platform.js';

/**
 * How a call reached the method: `/rpc` (`http`), `/rpc/stream` (`stream`), a durable stream's
 * background run (`durable`), an MCP `tools/call` (`mcp`) or an LLM tool call (`tool`).
 */
export type RpcTransport = 'http' | 'stream' | 'durable' | 'mcp' | 'tool';

/**
 * Turns a call's params into the handler's arguments (the method's param plan, built at startup).
 * A Promise when a Standard Schema validates asynchronously (an async refinement).
 */
export interface RpcArgsResolver {
  resolve(params: RpcParamsValue | undefined, ctx: RpcContext): unknown[] | Promise<unknown[]>;
}

/**
 * One HTTP request to a route of the module and its answer, whatever the platform: the platform's
 * own request and reply (what the app's enhancers see), the Node ones under them, the body text,
 * and the state every call it carries shares (one call, or each item of a batch): the request id,
 * the abort signal, and what the response headers must say afterwards. Built by the one exchange
 * factory (`RpcExchangeFactory`, `http/http-edge.ts`) when a platform adapter hands a request to a route.
 */
export class RpcHttpExchange<TRequest = any, TReply = any> {
  /** Highest HTTP status any item asked for (used when `httpStatus.enabled`). */
  status = 200;
  /** Largest `retryAfter` (seconds) among rate-limited items; 0 when none. */
  retryAfter = 0;
  /** `<method>: <reason>` of every deprecated method called. */
  deprecations: string[] | undefined;
  /** Whether the body is a batch: set where the batch is parsed (`http/rpc-batch-dispatcher.ts`); its items share one request span. */
  isBatch = false;
  /** Nest context id, created on first use by a request-scoped handler. */
  contextId: ContextId | undefined;
  private abortController: AbortController | undefined;
  private resolvedRoles: readonly string[] | undefined;
  /** `request.user` when the roles were resolved: a guard of a later batch item may still set it. */
  private rolesResolvedFor: unknown;
  private parsedQuery: ParsedUrlQuery | undefined;

  constructor(
    readonly platform: HttpPlatform<TRequest, TReply>,
    /** The platform's request (Fastify's or Express's), as the app's guards see it. */
    readonly request: TRequest,
    /** The platform's reply (Fastify's) or response (Express's). */
    readonly reply: TReply,
    readonly requestId: string,
    /** The route that serves it, as declared (`/rpc`, `/rpc/streams/:id`): what spans name. */
    readonly route: string,
    private readonly rolesResolver: RolesResolver | undefined,
    /** The body as text, read by the platform adapter under the module's bounds; undefined: none. */
    readonly body?: string,
  ) {}

  /** The Node request. */
  get raw(): IncomingMessage {
    return this.platform.rawRequest(this.request);
  }

  /** The Node response. */
  get res(): ServerResponse {
    return this.platform.rawResponse(this.reply);
  }

  get method(): string {
    return this.raw.method ?? 'GET';
  }

  get headers(): IncomingHttpHeaders {
    return this.raw.headers;
  }

  /**
   * The query string, parsed by one parser on every platform (Node's `querystring`, as Fastify's
   * default and Express 5's `simple` parser read it): a repeated name gives an array.
   */
  get query(): ParsedUrlQuery {
    if (this.parsedQuery) return this.parsedQuery;
    const url = this.raw.url ?? '';
    const mark = url.indexOf('?');
    return (this.parsedQuery = mark < 0 ? {} : parseQueryString(url.slice(mark + 1)));
  }

  /** A route parameter (`:id`). */
  param(name: string): string | undefined {
    return this.platform.params(this.request)[name];
  }

  /** Whether an answer went out already (ours, or one an enhancer wrote itself). */
  get sent(): boolean {
    return this.platform.sent(this.reply);
  }

  /** Aborted when the client goes away before the response is complete. Created on first use. */
  get signal(): AbortSignal {
    if (this.abortController) return this.abortController.signal;
    const controller = (this.abortController = new AbortController());
    const res = this.res;
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
  private resolvedArgs: unknown[] | Promise<unknown[]> | undefined;

  /** @internal built by the module for each call */
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

  /**
   * The platform's request the call came in: Fastify's `FastifyRequest` or Express's `Request`,
   * the object the app's guards see (`context.switchToHttp().getRequest()`).
   */
  get request(): any {
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
   * pipeline reads them one index at a time; the direct path takes them all at once. A Promise
   * only when a schema of the method validates asynchronously.
   */
  resolveArgs(): unknown[] | Promise<unknown[]> {
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
