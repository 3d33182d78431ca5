import type { RolesResolver, UserIdResolver } from '../options/json-rpc-options.js';

/** The platform's request (Fastify's or Express's): only `user` (and Fastify's `raw`) are read. */
type PlatformRequest = { user?: unknown; raw?: { user?: unknown } };

/**
 * Who is calling: `request.user`, as Passport and most auth guards set it on the platform's
 * request; else, on Fastify, the raw Node request's `user`, which is where Nest middleware (it
 * sees only the raw request there) leaves it. On Express both are the same object.
 */
export function requestUser(request: unknown): unknown {
  const r = request as PlatformRequest;
  return r.user ?? r.raw?.user;
}

/** The caller's roles: what `security.rolesResolver` says, else `user.roles`; strings only. */
export function callerRoles(request: unknown, resolver: RolesResolver | undefined): readonly string[] {
  const roles = resolver ? resolver(request) : (requestUser(request) as { roles?: unknown } | undefined)?.roles;
  return Array.isArray(roles) ? roles.filter((r): r is string => typeof r === 'string') : [];
}

/**
 * The caller's identity for `scope: 'user'`: what `security.userIdResolver` says, else
 * `request.user.id`, `.sub` or `.username` (Passport / JWT conventions). Undefined: anonymous.
 */
export function callerUserId(request: unknown, resolver: UserIdResolver | undefined): string | undefined {
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
