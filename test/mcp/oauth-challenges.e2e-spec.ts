/**
 * The OAuth resource server (`mcp.auth` with the built-in JWT verifier) over HTTP, for what
 * oauth.e2e-spec.ts does not drive: the guard rows of the challenge table in docs/mcp.md on both
 * eras, the rest of the verifier's table (`alg: none`, `HS256`, no `exp`, a future `nbf`, another
 * key, the issuer's keys out of reach), and tasks under OAuth — the token's subject owns the task,
 * the roles challenge comes at creation, a guard's refusal inside a task is the task's error
 * result (a durable tool's handle followed with the token: oauth-durable-routes.e2e-spec.ts).
 */
import 'reflect-metadata';
import { ForbiddenException, Injectable, Module, UnauthorizedException, UseGuards, type CanActivate, type ExecutionContext, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { SignJWT, generateKeyPair } from 'jose';
import { JsonRpcModule, MemoryStreamStore, RpcMcp, RpcMethod, RpcStream, getRpcContext } from '@nest-jsonrpc/server';
import { CapturingLogger, testAdapter } from '../support/rpc-test-app.js';
import { mcpRequest, postMcp, TASKS_EXTENSION, type Era } from './support/mcp-wire.js';
import { freePort, startOAuthTestSite, type TestAuthorizationServer } from './support/oauth.js';

@Injectable()
class ForbidGuard implements CanActivate {
  canActivate(): boolean {
    throw new ForbiddenException('Not for you');
  }
}

@Injectable()
class UnauthorizedGuard implements CanActivate {
  canActivate(): boolean {
    throw new UnauthorizedException('Sign in again');
  }
}

@Injectable()
class SignedInGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    if ((getRpcContext(context)!.request as { user?: unknown }).user === undefined) throw new UnauthorizedException('Sign in first');
    return true;
  }
}

@Injectable()
class GuardedTools {
  @RpcMethod('forbidden.reports', { roles: ['reader'], description: 'A tool with roles whose guard refuses' })
  @RpcMcp()
  @UseGuards(ForbidGuard)
  forbiddenReports() {
    return 'never';
  }

  @RpcMethod('forbidden.open', { description: 'A tool without roles whose guard refuses' })
  @RpcMcp()
  @UseGuards(ForbidGuard)
  forbiddenOpen() {
    return 'never';
  }

  @RpcMethod('unauthorized.always', { description: 'A tool whose guard always answers UnauthorizedException' })
  @RpcMcp()
  @UseGuards(UnauthorizedGuard)
  unauthorized() {
    return 'never';
  }

  @RpcMethod('jobs.report', { roles: ['reader'], description: 'A long report' })
  @RpcStream({ durable: true })
  @RpcMcp()
  async *report() {
    yield { delta: 'part 1 ' };
    yield { delta: 'part 2' };
  }

  @RpcMethod('jobs.signed', { description: 'A plain task that needs a signed-in caller' })
  @RpcMcp({ task: 'required' })
  @UseGuards(SignedInGuard)
  signed() {
    return { done: true };
  }
}

describe('MCP OAuth: guard challenges, the verifier\'s refusals, tasks under OAuth', () => {
  let as: TestAuthorizationServer;
  let app: INestApplication;
  let resource: string;
  let metadataUrl: string;

  function moduleFor(jwksUri: string) {
    @Module({
      imports: [
        JsonRpcModule.forRoot({
          durable: { enabled: true, store: new MemoryStreamStore() },
          mcp: {
            enabled: true,
            tasks: { pollIntervalMs: 10 },
            auth: { resource, authorizationServers: [as.issuer], scopeRoles: { 'reports:read': 'reader' }, jwt: { jwksUri } },
          },
        }),
      ],
      providers: [GuardedTools, ForbidGuard, UnauthorizedGuard, SignedInGuard],
    })
    class OAuthChallengesModule {}
    return OAuthChallengesModule;
  }

  beforeAll(async () => {
    const site = await startOAuthTestSite();
    ({ as, resource, metadataUrl } = site);
    app = await NestFactory.create<INestApplication>(moduleFor(`${as.issuer}/jwks`), testAdapter(), { logger: new CapturingLogger() });
    await app.listen(site.port, '127.0.0.1');
  });
  afterAll(async () => {
    await app?.close();
    await as?.stop();
  });

  const bearer = async (claims: Record<string, unknown> = {}) => ({ authorization: `Bearer ${await as.token({ sub: 'ada', aud: resource, scope: 'reports:read', ...claims })}` });
  const send = (era: Era, method: string, params: Record<string, unknown>, headers: Record<string, string> = {}, capabilities?: Record<string, unknown>) => {
    const request = mcpRequest(era, 'r', method, params, { capabilities });
    request.headers = { ...request.headers, ...headers };
    return postMcp(resource, request);
  };

  describe.each<Era>(['2025', '2026'])('the guard rows of the challenge table (%s era)', (era) => {
    const call = (name: string, headers: Record<string, string> = {}) => send(era, 'tools/call', { name, arguments: {} }, headers);

    it('no credentials, a guard throws ForbiddenException: 401 naming the metadata', async () => {
      const { status, headers, body } = await call('forbidden.open');
      expect([status, headers.get('www-authenticate'), body.error]).toEqual([401, `Bearer resource_metadata="${metadataUrl}"`, { code: -32001, message: 'Authentication required' }]);
    });

    it('authenticated, a guard\'s ForbiddenException on a tool with roles: 403 insufficient_scope with the tool\'s scopes', async () => {
      const { status, headers, body } = await call('forbidden.reports', await bearer());
      expect([status, headers.get('www-authenticate'), body.error]).toEqual([
        403,
        `Bearer error="insufficient_scope", resource_metadata="${metadataUrl}", scope="reports:read"`,
        { code: -32001, message: 'Insufficient scope', data: { scope: 'reports:read' } },
      ]);
    });

    it('authenticated, a guard\'s ForbiddenException on a tool without roles: the tool error, as without OAuth', async () => {
      const { status, headers, body } = await call('forbidden.open', await bearer());
      expect([status, headers.get('www-authenticate')]).toEqual([200, null]);
      expect([body.result.isError, body.result.content]).toEqual([true, [{ type: 'text', text: 'Error -32001: Not for you' }]]);
    });

    it('authenticated, a guard throws UnauthorizedException: 401 invalid_token', async () => {
      const { status, headers, body } = await call('unauthorized.always', await bearer());
      expect([status, headers.get('www-authenticate'), body.error]).toEqual([401, `Bearer error="invalid_token", resource_metadata="${metadataUrl}"`, { code: -32001, message: 'Invalid access token' }]);
    });
  });

  describe('the verifier refuses what the table in docs/mcp.md lists, with the description it names', () => {
    const refused = async (authorization: string) => {
      const { status, headers, body } = await send('2026', 'tools/list', {}, { authorization });
      return [status, headers.get('www-authenticate'), body.error.message];
    };
    const expectRefused = async (authorization: string, description: string) =>
      expect(await refused(authorization)).toEqual([
        401,
        `Bearer error="invalid_token", error_description="${description}", resource_metadata="${metadataUrl}"`,
        `Invalid access token: ${description}`,
      ]);
    const encode = (part: object) => Buffer.from(JSON.stringify(part)).toString('base64url');
    const now = () => Math.floor(Date.now() / 1000);

    it('alg: none and HS256', async () => {
      const unsigned = `${encode({ alg: 'none', typ: 'JWT' })}.${encode({ iss: as.issuer, aud: resource, sub: 'mallory', exp: now() + 300 })}.`;
      await expectRefused(`Bearer ${unsigned}`, 'The access token is signed with an algorithm that is not accepted');
      const hs256 = await new SignJWT({ sub: 'mallory' }).setProtectedHeader({ alg: 'HS256' }).setIssuer(as.issuer).setAudience(resource).setExpirationTime('5m').sign(new TextEncoder().encode('s'.repeat(32)));
      await expectRefused(`Bearer ${hs256}`, 'The access token is signed with an algorithm that is not accepted');
    });

    it('a token without exp, one not valid yet, one signed by another key', async () => {
      await expectRefused((await bearer({ exp: undefined })).authorization, "The access token's exp claim is not valid");
      await expectRefused((await bearer({ nbf: now() + 600 })).authorization, "The access token's nbf claim is not valid");
      const { privateKey } = await generateKeyPair('RS256');
      const otherKey = await new SignJWT({ sub: 'mallory' }).setProtectedHeader({ alg: 'RS256' }).setIssuer(as.issuer).setAudience(resource).setExpirationTime('5m').sign(privateKey);
      await expectRefused(`Bearer ${otherKey}`, 'The access token signature is not valid');
    });

    it('the issuer\'s keys cannot be fetched: 503 -32603, no challenge (the token may be fine)', async () => {
      const port = await freePort();
      const unreachable = await NestFactory.create<INestApplication>(moduleFor(`http://127.0.0.1:${await freePort()}/jwks`), testAdapter(), { logger: new CapturingLogger() });
      await unreachable.listen(port, '127.0.0.1');
      try {
        const request = mcpRequest('2025', 'u', 'tools/list');
        request.headers = { ...request.headers, ...(await bearer()) };
        const { status, headers, body } = await postMcp(`http://127.0.0.1:${port}/mcp`, request);
        expect([status, headers.get('www-authenticate'), body.error.code, body.error.message.startsWith('Token verification unavailable')]).toEqual([503, null, -32603, true]);
      } finally {
        await unreachable.close();
      }
    });
  });

  describe.each<Era>(['2025', '2026'])('tasks under OAuth (%s era)', (era) => {
    const withTasks = era === '2026' ? { extensions: { [TASKS_EXTENSION]: {} } } : undefined;
    const create = (name: string, headers: Record<string, string>) =>
      send(era, 'tools/call', { name, arguments: {}, ...(era === '2025' && { task: { ttl: 60_000 } }) }, headers, withTasks);
    const taskIdOf = (body: any): string => body.result.taskId ?? body.result.task.taskId;
    const get = (taskId: string, headers: Record<string, string>) => send(era, 'tasks/get', { taskId }, headers, withTasks);
    async function settled(taskId: string, headers: Record<string, string>) {
      for (;;) {
        const { body } = await get(taskId, headers);
        const task = body.result.task ?? body.result;
        if (task.status !== 'working') return body.result;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }

    it('creating a task of a tool with roles is challenged like a call: 401 anonymous, 403 without the scope', async () => {
      const anonymous = await create('jobs.report', {});
      expect([anonymous.status, anonymous.headers.get('www-authenticate')]).toEqual([401, `Bearer resource_metadata="${metadataUrl}", scope="reports:read"`]);
      const unscoped = await create('jobs.report', await bearer({ scope: '' }));
      expect([unscoped.status, unscoped.headers.get('www-authenticate')]).toEqual([403, `Bearer error="insufficient_scope", resource_metadata="${metadataUrl}", scope="reports:read"`]);
    });

    it('the token\'s subject owns the task: another subject, an anonymous caller and a token without the scope read "Task not found"', async () => {
      const ada = await bearer();
      const created = await create('jobs.report', ada);
      expect(created.status).toBe(200);
      const taskId = taskIdOf(created.body);
      expect((await settled(taskId, ada)).status).toBe('completed');
      for (const other of [await bearer({ sub: 'bob' }), {}, await bearer({ scope: '' })]) {
        const { status, body } = await get(taskId, other);
        expect([status, body.error]).toEqual([200, { code: -32602, message: 'Failed to retrieve task: Task not found' }]);
      }
      const badToken = await get(taskId, { authorization: 'Bearer not-a-jwt' });
      expect(badToken.status).toBe(401);
    });

    it('a guard\'s refusal inside a task is not challenged (the task exists already): the task completes with the tool error', async () => {
      const created = await create('jobs.signed', {});
      expect(created.status).toBe(200);
      const taskId = taskIdOf(created.body);
      const done = await settled(taskId, {});
      if (era === '2026') {
        expect([done.status, done.result.isError, done.result.content]).toEqual(['completed', true, [{ type: 'text', text: 'Error -32001: Sign in first' }]]);
      } else {
        expect(done.status).toBe('completed');
        const { body } = await send(era, 'tasks/result', { taskId }, {});
        expect([body.result.isError, body.result.content]).toEqual([true, [{ type: 'text', text: 'Error -32001: Sign in first' }]]);
      }
    });
  });
});
