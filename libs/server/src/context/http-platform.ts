import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';

/**
 * The platform port: the little the module's routes need from the HTTP platform under them,
 * implemented once per platform (`platforms/fastify-platform.ts`, `platforms/express-platform.ts`).
 * Route code reaches the platform only through this, by way of the exchange
 * (`RpcHttpExchange`), so it imports neither Fastify nor Express.
 *
 * `TRequest`/`TReply` are the platform's own request and reply objects, kept as they are: they are
 * what the app's guards, interceptors and filters see (`context.switchToHttp().getRequest()`).
 * Everything else a route reads (method, URL, headers, the body stream) is the Node request
 * underneath, the same on both platforms.
 */
export interface HttpPlatform<TRequest = any, TReply = any> {
  /** `'fastify'` or `'express'`, as Nest's `HttpAdapterHost.httpAdapter.getType()` says. */
  readonly type: string;
  /** The Node request under the platform's. */
  rawRequest(request: TRequest): IncomingMessage;
  /** The Node response under the platform's. */
  rawResponse(reply: TReply): ServerResponse;
  /** The route's parameters (`:id`), as the platform's router decoded them. */
  params(request: TRequest): Readonly<Record<string, string | undefined>>;
  /** Whether an answer went out already (the module's, or one an enhancer wrote itself). */
  sent(reply: TReply): boolean;
  /** A whole answer. `body` undefined: none (a 204). Headers the app's hooks set stay on it. */
  send(reply: TReply, status: number, headers: OutgoingHttpHeaders, body?: string | Buffer): void;
  /**
   * Hands the Node response to the module (a stream, an answer sent before the body was read):
   * the platform will not write to it again. Returns the headers the app's hooks or middleware
   * set for the answer (CORS...) that are not on the Node response yet, to be written with the
   * module's own.
   */
  takeOver(reply: TReply): OutgoingHttpHeaders;
}
