import type { FastifyRequest } from 'fastify';

export type UserIdResolver = (request: FastifyRequest) => string | number | undefined;

/**
 * The caller's identity for `scope: 'user'`: what `security.userIdResolver` says, else
 * `request.user.id`, `.sub` or `.username` (Passport / JWT conventions). Undefined: anonymous.
 */
export function callerUserId(request: FastifyRequest, resolver: UserIdResolver | undefined): string | undefined {
  let id: unknown;
  if (resolver) id = resolver(request);
  else {
    const user = (request as { user?: Record<string, unknown> }).user;
    if (user !== null && typeof user === 'object') id = user.id ?? user.sub ?? user.username;
  }
  if (typeof id === 'string') return id.length ? id : undefined;
  if (typeof id === 'number' && Number.isFinite(id)) return String(id);
  return undefined;
}
