import type { FastifyRequest } from 'fastify';
import type { RolesResolver, UserIdResolver } from '../options/json-rpc-options.js';

/**
 * Who is calling: `request.user`, as Passport and most auth guards set it on the Fastify request;
 * else the raw Node request's `user`, which is where Nest middleware (it sees only the raw
 * request on Fastify) leaves it.
 */
export function requestUser(request: FastifyRequest): unknown {
  return (request as { user?: unknown }).user ?? (request.raw as { user?: unknown } | undefined)?.user;
}

/** The caller's roles: what `security.rolesResolver` says, else `user.roles`; strings only. */
export function callerRoles(request: FastifyRequest, resolver: RolesResolver | undefined): readonly string[] {
  const roles = resolver ? resolver(request) : (requestUser(request) as { roles?: unknown } | undefined)?.roles;
  return Array.isArray(roles) ? roles.filter((r): r is string => typeof r === 'string') : [];
}

/**
 * The caller's identity for `scope: 'user'`: what `security.userIdResolver` says, else
 * `request.user.id`, `.sub` or `.username` (Passport / JWT conventions). Undefined: anonymous.
 */
export function callerUserId(request: FastifyRequest, resolver: UserIdResolver | undefined): string | undefined {
  let id: unknown;
  if (resolver) id = resolver(request);
  else {
    const user = requestUser(request) as Record<string, unknown> | null | undefined;
    if (user !== null && typeof user === 'object') id = user.id ?? user.sub ?? user.username;
  }
  if (typeof id === 'string') return id.length ? id : undefined;
  if (typeof id === 'number' && Number.isFinite(id)) return String(id);
  return undefined;
}
