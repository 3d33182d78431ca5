import { Injectable, type NestMiddleware } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { UserDirectory } from '../account/user-directory.js';
import { demoMcpAuth } from '../mcp-auth.js';

/** The module's default `durable.path` and `mcp.path`; the demo does not change them. */
export const IDENTIFIED_PATHS = ['/rpc/streams', '/mcp'] as const;

/**
 * Who is calling on the durable REST/SSE routes (`GET/DELETE /rpc/streams…`). Those are plain
 * routes of the app's server, not controllers: the demo's `BearerTokenGuard` (an APP_GUARD) never
 * runs there, so without this middleware a report started with `Authorization: Bearer <token>`
 * (owned by that user) could not be attached, listed or cancelled by anyone. Same token, same
 * `request.user`, set by a Nest middleware — what Passport or `@fastify/jwt` would do in a real
 * app — on either platform (on Fastify, Nest middleware sees the Node request, whose `user` the
 * module reads too). The MCP routes (`/mcp`, `/mcp/tools`, `/mcp/call`) need it as well:
 * `tools/list` is filtered by the caller's roles before any guard runs. With MCP OAuth on, a
 * bearer token that is not a demo login goes on to the module, which verifies it as a JWT on the
 * MCP routes and on the durable routes alike (an agent reads its durable report at `sse_url` with
 * the token it called the tool with: docs/mcp.md, "Streams and durable methods").
 */
@Injectable()
export class DurableRoutesIdentity implements NestMiddleware {
  /** MCP OAuth is on (apps/demo/src/mcp-auth.ts): the MCP and durable routes also take the authorization server's JWTs. */
  private readonly oauth = demoMcpAuth() !== undefined;

  constructor(private readonly directory: UserDirectory) {}

  use(request: IncomingMessage & { user?: unknown; originalUrl?: string }, response: ServerResponse, next: () => void): void {
    const header = request.headers.authorization;
    if (header === undefined || !isIdentifiedPath(request.originalUrl ?? request.url ?? '')) return next();
    const user = header.startsWith('Bearer ') ? this.directory.byToken(header.slice(7)) : undefined;
    // With MCP OAuth on, another bearer token is a JWT for the module to verify (a bad one: its 401 challenge).
    if (!user && this.oauth) return next();
    if (!user) {
      response.writeHead(401, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
      response.end(JSON.stringify({ error: { code: -32001, message: 'Invalid or expired token; call auth.login' } }));
      return;
    }
    request.user = user;
    next();
  }
}

function isIdentifiedPath(url: string): boolean {
  const path = url.split('?')[0];
  return IDENTIFIED_PATHS.some((base) => path === base || path.startsWith(`${base}/`));
}
