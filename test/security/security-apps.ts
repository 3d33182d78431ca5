/**
 * Shared pieces of the security suites: a header-based identity (as an auth guard or a Fastify
 * hook would set it) and helpers to build calls.
 */
import type { INestApplication, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { secondsLeftOf } from '../support/matchers.js';
import { onEveryRequest, testAdapter } from '../support/rpc-test-app.js';

export { secondsLeftOf };

/** `x-user: alice` and `x-roles: admin,ops` become `request.user` = { id: 'alice', roles: [...] }. */
export function headerIdentity(app: INestApplication): void {
  onEveryRequest(app, (request) => {
    const id = request.headers['x-user'];
    if (typeof id === 'string' && id) {
      const roles = String(request.headers['x-roles'] ?? '').split(',').filter(Boolean);
      request.user = { id, roles };
    }
  });
}

export const as = (user: string, roles: string[] = []) => ({ headers: { 'x-user': user, 'x-roles': roles.join(',') } });

export const call = (method: string, params?: unknown, id: number | string = 1) =>
  params === undefined ? { jsonrpc: '2.0', method, id } : { jsonrpc: '2.0', method, params, id };

export const notification = (method: string, params?: unknown) =>
  params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params };

/** The -32003 answer to a call over its rate limit. */
export const limited = (method: string, retryAfter: number | ReturnType<typeof secondsLeftOf>, id: number | string = 1) => ({
  jsonrpc: '2.0',
  error: { code: -32003, message: `Rate limit exceeded for ${method}`, data: { retryAfter } },
  id,
});

/** Redis for the suites that need one: REDIS_URL or the local default; unique prefix per run. */
export { REDIS_URL } from '../support/redis.js';

/** Boots `module` without listening and returns the startup error (Nest would otherwise exit the process). */
export async function startupError(module: Type<unknown>): Promise<Error> {
  let app: Awaited<ReturnType<typeof NestFactory.create>> | undefined;
  try {
    app = await NestFactory.create(module, testAdapter(), { logger: false, abortOnError: false });
    await app.init();
  } catch (error) {
    return error as Error;
  } finally {
    await app?.close().catch(() => undefined);
  }
  throw new Error('the application started');
}
