import { Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { UserDirectory } from '../account/user-directory.js';

/** The module's default `durable.path` and `mcp.path`; the demo does not change them. */
const DURABLE_PATH = '/rpc/streams';
const MCP_PATH = '/mcp';

/**
 * Who is calling on the durable REST/SSE routes (`GET/DELETE /rpc/streams…`). Those are plain
 * Fastify routes: the demo's `BearerTokenGuard` (an APP_GUARD) never runs there, so without this
 * hook a report started with `Authorization: Bearer <token>` (owned by that user) could not be
 * attached, listed or cancelled by anyone. Same token, same `request.user`, set in a Fastify
 * `onRequest` hook — what `@fastify/jwt` or `@fastify/passport` would do in a real app.
 * The MCP routes (`/mcp`, `/mcp/tools`, `/mcp/call`) need it too: `tools/list` is filtered by the
 * caller's roles before any guard runs.
 */
@Injectable()
export class DurableRoutesIdentity implements OnModuleInit {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly directory: UserDirectory,
  ) {}

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    fastify.addHook('onRequest', this.identify);
  }

  private readonly identify = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const route = request.routeOptions.url;
    if (route === undefined || !isIdentifiedRoute(route)) return;
    const header = request.headers.authorization;
    if (header === undefined) return;
    const user = header.startsWith('Bearer ') ? this.directory.byToken(header.slice(7)) : undefined;
    if (!user) {
      await reply.code(401).header('cache-control', 'no-store').send({ error: { code: -32001, message: 'Invalid or expired token; call auth.login' } });
      return;
    }
    (request as FastifyRequest & { user?: unknown }).user = user;
  };
}

function isIdentifiedRoute(route: string): boolean {
  return [DURABLE_PATH, MCP_PATH].some((base) => route === base || route.startsWith(`${base}/`));
}
