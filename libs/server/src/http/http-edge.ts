import { RpcHttpExchange } from '../context/rpc-context.js';
import type { HttpPlatform } from '../context/http-platform.js';
import type { RolesResolver } from '../options/json-rpc-options.js';
import { requestIdOf } from './request-id.js';
import type { RpcReplyWriter } from './rpc-reply-writer.js';
import type { RouteFamily, TransportErrorDetail, TransportErrorKind } from './transport-errors.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One route of the module, written once against the platform port (`context/http-platform.ts`). */
export interface HttpRoute {
  /** `'*'`: every verb. */
  readonly method: HttpMethod | readonly HttpMethod[] | '*';
  /** A static path; `:name` segments are parameters; a trailing `/*` matches everything below. */
  readonly path: string;
  /** Answers; a Promise settles once the answer is written (or the response taken over). */
  readonly handle: (exchange: RpcHttpExchange) => void | Promise<void>;
  /**
   * A GET route answers HEAD too, with the same handler: the platform sends its status and headers
   * without the body. A handler that takes the response over (`openStream`) must end it at once on
   * HEAD, replaying and attaching nothing; one whose answer only doing GET's work would tell
   * refuses HEAD itself (`GET <stream.path>` runs the method: 405, rpc-stream-routes.ts).
   */
}

/** A refusal decided before the body is read. */
export interface EarlyRefusal {
  readonly kind: TransportErrorKind;
  readonly detail?: TransportErrorDetail;
}

/**
 * Routes served together under one body rule and one refusal shape: what each route class gives
 * the platform adapter to mount (on Fastify, one encapsulated plugin).
 */
export interface HttpRouteGroup {
  /** What failed, in logs ("Request", "Stream request"...). */
  readonly name: string;
  /** The shape of its refusals (`http/transport-errors.ts`). */
  readonly family: RouteFamily;
  /**
   * `json`: the adapter reads each body as text before the handler — JSON media types only (else
   * 415), at most `maxRequestSize` (else 413), within `limits.bodyTimeoutMs` (else 408).
   * `ignored`: no route reads one, but a body sent anyway is held to the same size and time.
   */
  readonly body: 'json' | 'ignored';
  readonly routes: readonly HttpRoute[];
  /** Runs before the body is read (MCP's host check): a refusal is answered at once. */
  readonly admit?: (exchange: RpcHttpExchange) => EarlyRefusal | undefined;
  /** The server starts closing: end what would keep it open (streams, attached responses). */
  readonly onClose?: () => void | Promise<void>;
}

/** The platform side of the edge: a platform adapter serves route groups on the app's server. */
export interface HttpEdge {
  readonly platform: HttpPlatform;
  mount(group: HttpRouteGroup): void;
}

/**
 * The one exchange factory: every request a route serves (and every refusal the adapter sends
 * before one runs) gets its exchange here — its request id (the client's sane `X-Request-Id`, or
 * a new one) and the app's roles resolver.
 */
export class RpcExchangeFactory {
  constructor(private readonly rolesResolver: RolesResolver | undefined) {}

  create<TRequest, TReply>(
    platform: HttpPlatform<TRequest, TReply>,
    request: TRequest,
    reply: TReply,
    route: string,
    body?: string,
  ): RpcHttpExchange<TRequest, TReply> {
    const requestId = requestIdOf(platform.rawRequest(request).headers);
    return new RpcHttpExchange(platform, request, reply, requestId, route, this.rolesResolver, body);
  }
}

/** The route of the verbs a path does not serve: 405 with `Allow`, in the family's shape. */
export function methodNotAllowed(
  writer: Pick<RpcReplyWriter, 'sendTransportError'>,
  family: RouteFamily,
  method: HttpRoute['method'],
  path: string,
  detail: { allow: string; hint?: string },
): HttpRoute {
  return { method, path, handle: (exchange) => writer.sendTransportError(exchange, family, 'methodNotAllowed', detail) };
}
