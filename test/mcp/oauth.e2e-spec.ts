/**
 * The MCP endpoint as an OAuth 2.1 resource server (`mcp.auth` with the built-in JWT verifier),
 * end to end against a local authorization server: the SDK clients' own OAuth providers connect
 * anonymously, are challenged (401) when a call needs identity, discover the Protected Resource
 * Metadata and the authorization server, run PKCE and the token exchange for this resource, retry
 * with the token, and step up (403 insufficient_scope) for a tool that needs more. Then the bad
 * cases over plain HTTP: expired, wrong issuer, wrong audience, another resource's token, forged,
 * malformed, huge, in the query string.
 */
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2, UnauthorizedError as UnauthorizedV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError as UnauthorizedV1 } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { generateKeyPair, SignJWT } from 'jose';
import type { INestApplication } from '@nestjs/common';
import { CapturingLogger, testAdapter } from '../support/rpc-test-app.js';
import { mcpModule } from './support/mcp-test-app.js';
import { mcpRequest, postMcp, type Era } from './support/mcp-wire.js';
import { startOAuthTestSite, UnattendedOAuthProvider, type TestAuthorizationServer } from './support/oauth.js';

describe('MCP with OAuth 2.1 (mcp.auth, built-in JWT verifier)', () => {
  let as: TestAuthorizationServer;
  let app: INestApplication;
  let base: string;
  let resource: string;
  let metadataUrl: string;

  beforeAll(async () => {
    const site = await startOAuthTestSite();
    ({ as, base, resource, metadataUrl } = site);
    const module = mcpModule({
      mcp: {
        rest: true,
        auth: {
          resource,
          authorizationServers: [as.issuer],
          resourceName: 'MCP tests',
          scopeRoles: { 'reports:read': 'reader', 'reports:audit': 'auditor' },
          jwt: { jwksUri: `${as.issuer}/jwks` },
        },
      },
    });
    app = await NestFactory.create<INestApplication>(module, testAdapter(), { logger: new CapturingLogger() });
    await app.listen(site.port, '127.0.0.1');
  });
  afterAll(async () => {
    await app?.close();
    await as?.stop();
  });

  const challenge = (extra: string) => `Bearer ${extra}resource_metadata="${metadataUrl}"`;

  describe('discovery', () => {
    it('publishes the Protected Resource Metadata at the path-suffixed and the root form; any other path is 404', async () => {
      const expected = {
        resource,
        authorization_servers: [as.issuer],
        scopes_supported: ['reports:read', 'reports:audit'],
        bearer_methods_supported: ['header'],
        resource_name: 'MCP tests',
      };
      for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
        const res = await fetch(base + path);
        expect([res.status, await res.json()]).toEqual([200, expected]);
      }
      for (const path of ['/.well-known/oauth-protected-resource/other', '/.well-known/oauth-protected-resource/mcp/x']) {
        expect((await fetch(base + path)).status).toBe(404);
      }
    });

    it.each<Era>(['2025', '2026'])('lists every tool to anyone (%s era), each with the scopes it needs', async (era) => {
      const { body } = await postMcp(resource, mcpRequest(era, 1, 'tools/list'));
      const schemes = Object.fromEntries(body.result.tools.map((tool: any) => [tool.name, tool.securitySchemes]));
      expect(schemes['report.daily']).toEqual([{ type: 'oauth2', scopes: ['reports:read'] }]);
      expect(schemes['report.audit']).toEqual([{ type: 'oauth2', scopes: ['reports:audit'] }]);
      expect(schemes['math.add']).toEqual([{ type: 'noauth' }]);
      expect(body.result.tools.find((tool: any) => tool.name === 'report.daily')._meta).toEqual({ securitySchemes: [{ type: 'oauth2', scopes: ['reports:read'] }] });
    });
  });

  describe('the metadata routes', () => {
    it('answer HEAD, the CORS preflight, and 405 for other verbs', async () => {
      const url = `${base}/.well-known/oauth-protected-resource/mcp`;
      const head = await fetch(url, { method: 'HEAD' });
      expect([head.status, head.headers.get('content-type'), head.headers.get('access-control-allow-origin'), await head.text()]).toEqual([200, 'application/json; charset=utf-8', '*', '']);
      const preflight = await fetch(url, { method: 'OPTIONS', headers: { origin: 'http://inspector.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'mcp-protocol-version' } });
      expect([preflight.status, preflight.headers.get('access-control-allow-methods'), preflight.headers.get('access-control-allow-headers')]).toEqual([204, 'GET, HEAD, OPTIONS', 'mcp-protocol-version']);
      const post = await fetch(url, { method: 'POST' });
      expect([post.status, post.headers.get('allow'), await post.json()]).toEqual([405, 'GET, HEAD, OPTIONS', { error: { code: -32600, message: 'Method not allowed: use GET, HEAD or OPTIONS' } }]);
    });

    it('answer a path they do not describe with the JSON 404 of the module\'s REST routes', async () => {
      const res = await fetch(`${base}/.well-known/oauth-protected-resource/elsewhere`);
      expect([res.status, res.headers.get('content-type'), res.headers.get('cache-control'), await res.json()]).toEqual([
        404,
        'application/json; charset=utf-8',
        'no-store',
        { error: { code: -32002, message: 'No protected resource is described at this path' } },
      ]);
    });
  });

  describe('the SDK path (batches, progress) is challenged before anything runs', () => {
    it('a 2025 batch calling a protected tool, and a call with a progress token: 401, not a stream', async () => {
      const batch = await fetch(resource, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'report.daily' } }]),
      });
      expect([batch.status, batch.headers.get('www-authenticate'), await batch.json()]).toEqual([
        401,
        challenge('') + ', scope="reports:read"',
        { jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Authentication required', data: { scope: 'reports:read' } } },
      ]);
      for (const era of ['2025', '2026'] as const) {
        const progress = await postMcp(resource, mcpRequest(era, 'p', 'tools/call', { name: 'report.daily', arguments: {} }, { meta: { progressToken: 'p1' } }));
        expect([progress.status, progress.headers.get('content-type')?.split(';')[0]]).toEqual([401, 'application/json']);
      }
    });
  });

  describe('the REST surface (mcp.rest) is challenged the same way', () => {
    const callRest = (name: string, headers: Record<string, string> = {}, query = '') =>
      fetch(`${base}/mcp/call${query}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ name, arguments: {} }) });
    const restRefusal = (text: string) => ({ content: [{ type: 'text', text }], isError: true });

    it('lists every tool with its scopes; a protected call is 401, then 403 without the scope, then runs', async () => {
      const tools = await (await fetch(`${base}/mcp/tools`)).json();
      expect(tools.tools.find((tool: any) => tool.name === 'report.daily').securitySchemes).toEqual([{ type: 'oauth2', scopes: ['reports:read'] }]);
      const anonymous = await callRest('report.daily');
      expect([anonymous.status, anonymous.headers.get('www-authenticate'), await anonymous.json()]).toEqual([
        401,
        challenge('') + ', scope="reports:read"',
        restRefusal('Error -32001: Authentication required'),
      ]);
      const reader = { authorization: `Bearer ${await as.token({ sub: 'ada', aud: resource, scope: 'reports:read' })}` };
      const denied = await callRest('report.audit', reader);
      expect([denied.status, denied.headers.get('www-authenticate'), await denied.json()]).toEqual([
        403,
        `Bearer error="insufficient_scope", resource_metadata="${metadataUrl}", scope="reports:audit"`,
        restRefusal('Error -32001: Insufficient scope'),
      ]);
      const ok = await callRest('report.daily', reader);
      expect([ok.status, await ok.json()]).toEqual([200, { content: [{ type: 'text', text: '{"rows":3}' }] }]);
    });

    it('refuses a bad token and a token in the query string on both routes', async () => {
      const expired = { authorization: `Bearer ${await as.token({ sub: 'ada', aud: resource }, -120)}` };
      for (const res of [await fetch(`${base}/mcp/tools`, { headers: expired }), await callRest('math.add', expired)]) {
        expect([res.status, res.headers.get('www-authenticate')]).toEqual([401, `Bearer error="invalid_token", error_description="The access token expired", resource_metadata="${metadataUrl}"`]);
        expect(await res.json()).toEqual(restRefusal('Error -32001: Invalid access token: The access token expired'));
      }
      const query = await callRest('math.add', {}, '?access_token=abc');
      expect(query.status).toBe(400);
    });
  });

  describe.each<Era>(['2025', '2026'])('challenges over HTTP (%s era)', (era) => {
    const call = (name: string, headers: Record<string, string> = {}) => {
      const request = mcpRequest(era, 'c', 'tools/call', { name, arguments: {} });
      request.headers = { ...request.headers, ...headers };
      return postMcp(resource, request);
    };
    const bearer = async (claims: Record<string, unknown>, expiresIn?: number) => ({ authorization: `Bearer ${await as.token({ sub: 'ada', aud: resource, ...claims }, expiresIn)}` });

    it('a call that needs identity without credentials: 401 with the scopes the tool needs', async () => {
      const { status, headers, body } = await call('report.daily');
      expect(status).toBe(401);
      expect(headers.get('www-authenticate')).toBe(challenge('') + ', scope="reports:read"');
      expect(body).toEqual({ jsonrpc: '2.0', id: 'c', error: { code: -32001, message: 'Authentication required', data: { scope: 'reports:read' } } });
    });

    it('a guard that throws UnauthorizedException for an anonymous caller: 401', async () => {
      const { status, headers } = await call('account.whoami');
      expect(status).toBe(401);
      expect(headers.get('www-authenticate')).toBe(challenge(''));
    });

    it('a valid token: the call runs as the token\'s subject with the roles its scopes grant', async () => {
      const daily = await call('report.daily', await bearer({ scope: 'reports:read' }));
      expect([daily.status, daily.body.result.content]).toEqual([200, [{ type: 'text', text: '{"rows":3}' }]]);
      const me = await call('account.whoami', await bearer({ scope: '' }));
      expect(me.body.result.content).toEqual([{ type: 'text', text: '{"id":"ada"}' }]);
    });

    it('authenticated without the scope: 403 insufficient_scope naming the scope (step-up)', async () => {
      const { status, headers, body } = await call('report.audit', await bearer({ scope: 'reports:read' }));
      expect(status).toBe(403);
      expect(headers.get('www-authenticate')).toBe(`Bearer error="insufficient_scope", resource_metadata="${metadataUrl}", scope="reports:audit"`);
      expect(body.error).toEqual({ code: -32001, message: 'Insufficient scope', data: { scope: 'reports:audit' } });
    });

    it.each([
      ['expired', { scope: 'reports:read' }, -120, 'The access token expired'],
      ['issued by another issuer', { iss: 'https://evil.example.com' }, undefined, 'The access token was issued by an unexpected issuer'],
      ['for another audience (the client)', { aud: 'mcp-test-client' }, undefined, 'The access token is for another resource'],
      ['for another MCP server', { aud: 'https://other.example.com/mcp' }, undefined, 'The access token is for another resource'],
    ])('refuses a token %s: 401 invalid_token, on any method', async (_what, claims, expiresIn, description) => {
      const headers = await bearer(claims, expiresIn);
      for (const response of [await call('math.add', headers), await postMcp(resource, { ...mcpRequest(era, 'l', 'tools/list'), headers: { ...mcpRequest(era, 'l', 'tools/list').headers, ...headers } })]) {
        expect(response.status).toBe(401);
        expect(response.headers.get('www-authenticate')).toBe(`Bearer error="invalid_token", error_description="${description}", resource_metadata="${metadataUrl}"`);
        expect(response.body.error).toEqual({ code: -32001, message: `Invalid access token: ${description}` });
      }
    });

    it('refuses forged and malformed tokens, a token in the query string, and a huge Authorization header', async () => {
      const { privateKey } = await generateKeyPair('RS256');
      const forged = await new SignJWT({ sub: 'mallory', aud: resource, iss: as.issuer }).setProtectedHeader({ alg: 'RS256', kid: 'nope' }).setExpirationTime('5m').sign(privateKey);
      expect((await call('math.add', { authorization: `Bearer ${forged}` })).status).toBe(401);
      expect((await call('math.add', { authorization: 'Bearer not-a-jwt' })).headers.get('www-authenticate')).toContain('error_description="The access token is malformed"');
      const huge = await call('math.add', { authorization: `Bearer ${'a'.repeat(12_000)}` });
      expect([huge.status, huge.headers.get('www-authenticate')?.includes('The access token is malformed')]).toEqual([401, true]);
      const overLimit = await fetch(resource, { method: 'POST', headers: { ...mcpRequest(era, 'h', 'tools/list').headers, authorization: `Bearer ${'a'.repeat(20_000)}` }, body: '{}' });
      expect(overLimit.status).toBe(431);
      const query = await postMcp(`${resource}?access_token=abc`, mcpRequest(era, 'q', 'tools/list'));
      expect(query.status).toBe(400);
      expect(query.headers.get('www-authenticate')).toContain('error="invalid_request"');
    });
  });

  describe('the SDK clients\' own OAuth flow: discovery, PKCE, token for this resource, retry, step-up', () => {
    /** Runs `operation`; when the SDK stops at the authorization redirect, finishes it and runs it again. */
    async function authorized<T>(provider: UnattendedOAuthProvider, transport: { finishAuth(code: string): Promise<void> }, isUnauthorized: (e: unknown) => boolean, operation: () => Promise<T>): Promise<T> {
      for (let attempt = 0; ; attempt++) {
        try {
          return await operation();
        } catch (error) {
          if (!isUnauthorized(error) || attempt > 2 || !provider.code) throw error;
          await transport.finishAuth(provider.code);
          provider.code = undefined;
        }
      }
    }

    it('SDK 1.x (an authorization server that issues no refresh token: see the note in docs/mcp.md)', async () => {
      // SDK 1.32 answers any challenge by refreshing when it holds a refresh token, and a refresh
      // cannot widen the grant: its step-up works only when it must authorize again.
      as.issueRefreshTokens = false;
      const provider = new UnattendedOAuthProvider();
      const transport = new TransportV1(new URL(resource), { authProvider: provider as never });
      const client = new ClientV1({ name: 'v1-oauth', version: '1.0.0' });
      await client.connect(transport);
      const isUnauthorized = (e: unknown) => e instanceof UnauthorizedV1;
      const daily = await authorized(provider, transport, isUnauthorized, () => client.callTool({ name: 'report.daily', arguments: {} }));
      expect(daily.content).toEqual([{ type: 'text', text: '{"rows":3}' }]);
      // The client went through discovery to our authorization server, with PKCE, asking for the challenged scope for this resource.
      expect(provider.authorizations).toHaveLength(1);
      const asked = provider.authorizations[0].searchParams;
      expect([asked.get('scope'), asked.get('resource'), asked.get('code_challenge_method')]).toEqual(['reports:read', resource, 'S256']);
      const claims = JSON.parse(Buffer.from(provider.accessToken!.split('.')[1], 'base64url').toString());
      expect(claims).toMatchObject({ iss: as.issuer, aud: resource, scope: 'reports:read' });
      // Step-up: the audit tool needs another scope; 403 sends the client back for it.
      const audit = await authorized(provider, transport, isUnauthorized, () => client.callTool({ name: 'report.audit', arguments: {} }));
      expect(audit.content).toEqual([{ type: 'text', text: '{"entries":2}' }]);
      expect(provider.authorizations.map((u) => u.searchParams.get('scope'))).toEqual(['reports:read', 'reports:audit']);
      await client.close();
      as.issueRefreshTokens = true;
    });

    it('SDK 2.x negotiating 2026-07-28', async () => {
      const provider = new UnattendedOAuthProvider();
      const transport = new TransportV2(new URL(resource), { authProvider: provider as never });
      const client = new ClientV2({ name: 'v2-oauth', version: '2.0.0' }, { versionNegotiation: { mode: 'auto' } });
      await client.connect(transport);
      const isUnauthorized = (e: unknown) => e instanceof UnauthorizedV2;
      const daily = await authorized(provider, transport, isUnauthorized, () => client.callTool({ name: 'report.daily', arguments: {} }));
      expect(daily.content).toEqual([{ type: 'text', text: '{"rows":3}' }]);
      expect(provider.authorizations[0].searchParams.get('resource')).toBe(resource);
      const audit = await authorized(provider, transport, isUnauthorized, () => client.callTool({ name: 'report.audit', arguments: {} }));
      expect(audit.content).toEqual([{ type: 'text', text: '{"entries":2}' }]);
      await client.close();
    });
  });
});
