/**
 * A durable tool's handle under OAuth (`mcp.auth.jwt`): the agent that started the stream over
 * `POST /mcp` with a bearer JWT follows `sse_url` with the same token and reads its own stream —
 * the durable routes identify a bearer token with the MCP routes' verifier (docs/mcp.md, "Streams
 * and durable methods"; docs/durable.md, "Who may see what"). Over real HTTP, on both platforms:
 * attach with exact rows, resume with `Last-Event-ID`, the JSON page, the list, cancel; another
 * subject's token and no token find nothing (404); a forged, expired or foreign token is refused
 * as the MCP routes refuse it (401 `invalid_token` with the challenge) on every path and verb under
 * the prefix, the 405s and the catch-all 404 too; the owner's token without the scope reads 403
 * with the MCP routes' `insufficient_scope` step-up challenge; the issuer's keys out of reach is
 * 503; an identity the app set itself wins over the token (and its 403 carries no challenge).
 */
import 'reflect-metadata';
import { Injectable, Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { SignJWT, generateKeyPair } from 'jose';
import { JsonRpcModule, MemoryStreamStore, RpcMcp, RpcMethod, RpcStream, type DurableRpcContext, type RpcContext } from '@nest-jsonrpc/server';
import { eventually } from '../support/async.js';
import { CapturingLogger, onEveryRequest, testAdapter } from '../support/rpc-test-app.js';
import { ManualFeed } from '../durable/support/durable-fixtures.js';
import { openSse } from '../durable/support/sse-client.js';
import { mcpRequest, postMcp } from './support/mcp-wire.js';
import { freePort, startOAuthTestSite, type OAuthTestSite } from './support/oauth.js';

const feeds = new Map<string, ManualFeed>();

@Injectable()
class AgentJobs {
  /** Rows the test pushes by hand; needs the `reader` role (the `reports:read` scope). */
  @RpcMethod('jobs.feed', { roles: ['reader'], description: 'A long job the agent follows on its sse_url' })
  @RpcStream({ durable: true })
  @RpcMcp()
  feed(_params: unknown, ctx: RpcContext) {
    const { streamId, signal } = ctx as DurableRpcContext;
    const feed = new ManualFeed(streamId, signal);
    feeds.set(streamId, feed);
    return feed.rows();
  }
}

/**
 * The app: durable streams in memory, MCP with the built-in verifier, and an identity of its own
 * (`x-user` becomes `request.user`, with the roles of `x-roles`, comma separated, else `reader`)
 * set before routing, as an app's middleware or hook would.
 */
function moduleFor(resource: string, issuer: string, jwksUri: string) {
  @Module({
    imports: [
      JsonRpcModule.forRoot({
        durable: { enabled: true, store: new MemoryStreamStore() },
        mcp: { enabled: true, auth: { resource, authorizationServers: [issuer], scopeRoles: { 'reports:read': 'reader' }, jwt: { jwksUri } } },
      }),
    ],
    providers: [AgentJobs],
  })
  class OAuthDurableModule {}
  return OAuthDurableModule;
}

function appIdentity(app: INestApplication): void {
  onEveryRequest(app, (request) => {
    const user = request.headers['x-user'];
    const roles = request.headers['x-roles'];
    if (typeof user === 'string') request.user = { id: user, roles: typeof roles === 'string' ? roles.split(',').filter(Boolean) : ['reader'] };
  });
}

describe('the durable routes under mcp.auth.jwt: an agent follows its handle with its token', () => {
  /** The authorization server, and the addresses the app and its challenges use. */
  let site: OAuthTestSite;
  let app: INestApplication;

  beforeAll(async () => {
    site = await startOAuthTestSite();
    app = await NestFactory.create<INestApplication>(moduleFor(site.resource, site.as.issuer, `${site.as.issuer}/jwks`), testAdapter(), { logger: new CapturingLogger() });
    appIdentity(app);
    await app.listen(site.port, '127.0.0.1');
  });
  afterAll(async () => {
    await app?.close();
    await site?.as.stop();
  });

  const bearer = async (claims: Record<string, unknown> = {}, expiresIn?: number) => ({
    authorization: `Bearer ${await site.as.token({ sub: 'ada', aud: site.resource, scope: 'reports:read', ...claims }, expiresIn)}`,
  });

  /** The agent's `tools/call` of the durable tool over `POST /mcp` (no tasks): its handle, and the stream's producer. */
  async function startOverMcp(headers: Record<string, string>): Promise<{ id: string; sseUrl: string; feed: ManualFeed }> {
    const request = mcpRequest('2026', 'c', 'tools/call', { name: 'jobs.feed', arguments: {} });
    request.headers = { ...request.headers, ...headers };
    const { status, body } = await postMcp(site.resource, request);
    expect(status).toBe(200);
    const handle = JSON.parse(body.result.content[0].text);
    expect(handle).toEqual({ stream_id: expect.any(String), sse_url: `/rpc/streams/${handle.stream_id}`, status: 'running' });
    const feed = await eventually(() => feeds.get(handle.stream_id), 5000, 'the producer');
    return { id: handle.stream_id, sseUrl: handle.sse_url, feed };
  }

  const getJson = async (path: string, headers: Record<string, string> = {}, method = 'GET') => {
    const res = await fetch(site.base + path, { method, headers });
    return { status: res.status, headers: res.headers, body: await res.json() };
  };
  const notFound = { status: 404, body: { error: { code: -32002, message: 'Stream not found' } } };

  it('the agent attaches to sse_url with the same token: its rows live, then from Last-Event-ID, then 204 past the end', async () => {
    const ada = await bearer();
    const { id, sseUrl, feed } = await startOverMcp(ada);
    feed.push({ step: 1 }, { step: 2 });
    const live = await openSse(site.base + sseUrl, { headers: ada });
    expect([live.status, live.headers.get('content-type'), live.headers.get('x-stream-id')]).toEqual([200, 'text/event-stream; charset=utf-8', id]);
    await live.waitForEvents(2);
    expect(live.events).toEqual([
      { id: '1', event: 'chunk', data: '{"step":1}' },
      { id: '2', event: 'chunk', data: '{"step":2}' },
    ]);
    live.close();
    feed.push({ step: 3 });
    feed.end();
    const resumed = await openSse(site.base + sseUrl, { headers: { ...ada, 'last-event-id': '2' } });
    await resumed.ended;
    expect(resumed.status).toBe(200);
    expect(resumed.raw).toBe('retry: 3000\n\nid: 3\nevent: chunk\ndata: {"step":3}\n\nid: 4\nevent: done\ndata: {}\n\nevent: end\ndata: {}\n\n');
    const whole = await openSse(site.base + sseUrl, { headers: ada });
    await whole.ended;
    expect(whole.events).toEqual([
      { id: '1', event: 'chunk', data: '{"step":1}' },
      { id: '2', event: 'chunk', data: '{"step":2}' },
      { id: '3', event: 'chunk', data: '{"step":3}' },
      { id: '4', event: 'done', data: '{}' },
    ]);
    const past = await fetch(site.base + sseUrl, { headers: { ...ada, 'last-event-id': '4' } });
    expect(past.status).toBe(204);
  });

  it('the same token reads the JSON page, lists the stream and cancels it', async () => {
    const ada = await bearer({ sub: 'ada-2' });
    const { id, sseUrl, feed } = await startOverMcp(ada);
    feed.push({ step: 1 });
    await eventually(async () => (await getJson(`${sseUrl}/events`, ada)).body.events?.length === 1);
    expect(await getJson(`${sseUrl}/events?after=0`, ada)).toMatchObject({ status: 200, body: { events: [{ id: 1, event: 'chunk', data: { step: 1 } }] } });
    const list = await getJson('/rpc/streams?status=running', ada);
    expect([list.status, list.body.streams.map((s: { stream_id: string; method: string }) => [s.stream_id, s.method])]).toEqual([200, [[id, 'jobs.feed']]]);
    expect(await getJson(sseUrl, ada, 'DELETE')).toMatchObject({ status: 200, body: { stream_id: id, status: 'cancelled' } });
  });

  it('another subject\'s valid token, no token, another scheme and a token in the query string find nothing: 404, as before', async () => {
    const ada = await bearer({ sub: 'ada-3' });
    const { sseUrl, feed } = await startOverMcp(ada);
    feed.push({ step: 1 });
    const anonymousLike = [await bearer({ sub: 'bob' }), {}, { authorization: 'Basic YWRhOnB3' }];
    for (const headers of anonymousLike) {
      for (const [path, method] of [[sseUrl, 'GET'], [`${sseUrl}/events`, 'GET'], [sseUrl, 'DELETE']] as const) {
        expect(await getJson(path, headers, method)).toMatchObject(notFound);
      }
      expect(await getJson('/rpc/streams', headers)).toMatchObject({ status: 200, body: { streams: [] } });
    }
    // The durable routes read the `Authorization` header only: a query token is not the verifier's (nor refused).
    const token = ada.authorization.slice('Bearer '.length);
    expect(await getJson(`${sseUrl}/events?access_token=${token}`)).toMatchObject(notFound);
    // Still running, still the agent's.
    expect((await getJson(`${sseUrl}/events`, ada)).status).toBe(200);
    feed.end();
  });

  describe('the method\'s roles are re-checked against the token\'s scopes: the owner\'s token without the scope reads 403 with the step-up challenge', () => {
    it('attach (GET and HEAD), events and cancel: 403 insufficient_scope naming the scope, as /mcp answers a tool with those roles', async () => {
      const ada = await bearer({ sub: 'ada-4' });
      const { sseUrl, feed } = await startOverMcp(ada);
      feed.end();
      const unscoped = await bearer({ sub: 'ada-4', scope: '' });
      const challenge = `Bearer error="insufficient_scope", resource_metadata="${site.metadataUrl}", scope="reports:read"`;
      const body = { error: { code: -32001, message: 'One of the following roles is required: reader' } };
      for (const [path, method] of [[sseUrl, 'GET'], [`${sseUrl}/events`, 'GET'], [sseUrl, 'DELETE']] as const) {
        const res = await fetch(site.base + path, { method, headers: unscoped });
        expect([path, method, res.status, res.headers.get('www-authenticate'), res.headers.get('content-type'), await res.json()]).toEqual([
          path,
          method,
          403,
          challenge,
          'application/json; charset=utf-8',
          body,
        ]);
      }
      const head = await fetch(site.base + sseUrl, { method: 'HEAD', headers: unscoped });
      expect([head.status, head.headers.get('www-authenticate'), await head.text()]).toEqual([403, challenge, '']);
      // The same token names the same scope on /mcp: the client asks for it once, for both.
      const request = mcpRequest('2026', 'c', 'tools/call', { name: 'jobs.feed', arguments: {} });
      request.headers = { ...request.headers, ...unscoped };
      const onMcp = await postMcp(site.resource, request);
      expect([onMcp.status, onMcp.headers.get('www-authenticate')]).toEqual([403, challenge]);
      // Stepped up: the stream reads again.
      expect((await getJson(`${sseUrl}/events`, await bearer({ sub: 'ada-4' }))).status).toBe(200);
    });

    it('the app\'s own caller without the role reads 403 with no challenge: no token named it, none would help', async () => {
      const started = await fetch(`${site.base}/rpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-user': 'dave' },
        body: JSON.stringify({ jsonrpc: '2.0', method: 'jobs.feed', id: 1 }),
      });
      const { stream_id: id, sse_url: sseUrl } = (await started.json()).result;
      (await eventually(() => feeds.get(id))).end();
      // A token beside the app's identity is not looked at, so it changes nothing either.
      for (const headers of [{ 'x-user': 'dave', 'x-roles': '' }, { 'x-user': 'dave', 'x-roles': '', ...(await bearer({ sub: 'dave', scope: '' })) }]) {
        for (const [path, method] of [[sseUrl, 'GET'], [`${sseUrl}/events`, 'GET'], [sseUrl, 'DELETE']] as const) {
          const res = await fetch(site.base + path, { method, headers });
          expect([res.status, res.headers.get('www-authenticate'), await res.json()]).toEqual([403, null, { error: { code: -32001, message: 'One of the following roles is required: reader' } }]);
        }
      }
    });
  });

  describe('a token the verifier refuses is answered as on the MCP routes: 401 invalid_token with the challenge', () => {
    const encode = (part: object) => Buffer.from(JSON.stringify(part)).toString('base64url');
    const now = () => Math.floor(Date.now() / 1000);
    let sseUrl: string;

    beforeAll(async () => {
      const started = await startOverMcp(await bearer({ sub: 'ada-5' }));
      started.feed.end();
      sseUrl = started.sseUrl;
    });

    /** Every kind of route under the prefix: the four served, the three 405s, the catch-all 404 (deeper paths, other verbs). */
    const everyRoute = () =>
      [
        [sseUrl, 'GET'],
        [`${sseUrl}/events`, 'GET'],
        [sseUrl, 'DELETE'],
        ['/rpc/streams', 'GET'],
        ['/rpc/streams', 'POST'],
        [sseUrl, 'PUT'],
        [`${sseUrl}/events`, 'DELETE'],
        [`${sseUrl}/events/deeper`, 'GET'],
        [`${sseUrl}/other`, 'PATCH'],
      ] as const;

    async function expectRefused(authorization: string, description: string) {
      for (const [path, method] of everyRoute()) {
        const res = await fetch(site.base + path, { method, headers: { authorization } });
        expect([path, method, res.status, res.headers.get('www-authenticate'), res.headers.get('content-type'), res.headers.get('cache-control'), await res.json()]).toEqual([
          path,
          method,
          401,
          `Bearer error="invalid_token", error_description="${description}", resource_metadata="${site.metadataUrl}"`,
          'application/json; charset=utf-8',
          'no-store',
          { error: { code: -32001, message: `Invalid access token: ${description}` } },
        ]);
      }
    }

    it('signed by another key', async () => {
      const { privateKey } = await generateKeyPair('RS256');
      const forged = await new SignJWT({ sub: 'ada-5', scope: 'reports:read' }).setProtectedHeader({ alg: 'RS256' }).setIssuer(site.as.issuer).setAudience(site.resource).setExpirationTime('5m').sign(privateKey);
      await expectRefused(`Bearer ${forged}`, 'The access token signature is not valid');
    });

    it('alg: none', async () => {
      const unsigned = `${encode({ alg: 'none', typ: 'JWT' })}.${encode({ iss: site.as.issuer, aud: site.resource, sub: 'ada-5', scope: 'reports:read', exp: now() + 300 })}.`;
      await expectRefused(`Bearer ${unsigned}`, 'The access token is signed with an algorithm that is not accepted');
    });

    it('expired, for another resource, not a JWT', async () => {
      await expectRefused((await bearer({ sub: 'ada-5' }, -120)).authorization, 'The access token expired');
      await expectRefused((await bearer({ sub: 'ada-5', aud: 'https://other.example.com/mcp' })).authorization, 'The access token is for another resource');
      await expectRefused('Bearer not-a-jwt', 'The access token is malformed');
    });

    it('HEAD of the attach: the same status and challenge, no body', async () => {
      const res = await fetch(site.base + sseUrl, { method: 'HEAD', headers: { authorization: 'Bearer not-a-jwt' } });
      expect([res.status, res.headers.get('www-authenticate'), await res.text()]).toEqual([
        401,
        `Bearer error="invalid_token", error_description="The access token is malformed", resource_metadata="${site.metadataUrl}"`,
        '',
      ]);
    });

    it('a valid token, or none, keeps the 405 (with Allow) and the catch-all 404 as they were', async () => {
      const refused = { authorization: 'Bearer not-a-jwt' };
      for (const headers of [await bearer({ sub: 'ada-5' }), {}]) {
        for (const [path, method, allow, message] of [
          ['/rpc/streams', 'POST', 'GET', 'use GET'],
          [sseUrl, 'PUT', 'GET, DELETE', 'use GET or DELETE'],
          [`${sseUrl}/events`, 'DELETE', 'GET', 'use GET'],
        ] as const) {
          const res = await fetch(site.base + path, { method, headers });
          expect([path, method, res.status, res.headers.get('allow'), res.headers.get('www-authenticate'), await res.json()]).toEqual([
            path,
            method,
            405,
            allow,
            null,
            { error: { code: -32600, message: `Method not allowed: ${message}` } },
          ]);
        }
        for (const [path, method] of [[`${sseUrl}/events/deeper`, 'GET'], [`${sseUrl}/other`, 'PATCH']] as const) {
          const res = await fetch(site.base + path, { method, headers });
          expect([path, method, res.status, res.headers.get('www-authenticate'), await res.json()]).toEqual([path, method, 404, null, notFound.body]);
        }
      }
      // The app's identity beside a bad token: the app's caller, so the 405 stands.
      const res = await fetch(`${site.base}/rpc/streams`, { method: 'POST', headers: { ...refused, 'x-user': 'carol' } });
      expect([res.status, res.headers.get('allow')]).toEqual([405, 'GET']);
    });
  });

  describe('an identity the app set itself (request.user from its middleware) wins over the token', () => {
    it('the app\'s caller starts over /rpc and attaches with its own identity, with or without a bearer token beside it', async () => {
      const carol = { 'x-user': 'carol' };
      const started = await fetch(`${site.base}/rpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...carol },
        body: JSON.stringify({ jsonrpc: '2.0', method: 'jobs.feed', id: 1 }),
      });
      const { stream_id: id, sse_url: sseUrl } = (await started.json()).result;
      const feed = await eventually(() => feeds.get(id));
      feed.push({ step: 1 });
      feed.end();
      for (const headers of [carol, { ...carol, ...(await bearer()) }, { ...carol, authorization: 'Bearer not-a-jwt' }]) {
        const sse = await openSse(site.base + sseUrl, { headers });
        await sse.ended;
        expect([sse.status, sse.events.map((e) => e.event)]).toEqual([200, ['chunk', 'done']]);
      }
      // The token alone is ada, not carol.
      expect(await getJson(sseUrl, await bearer())).toMatchObject(notFound);
    });

    it('the app\'s identity beside an agent\'s token is the app\'s: the agent\'s stream is not carol\'s', async () => {
      const ada = await bearer({ sub: 'ada-6' });
      const { sseUrl, feed } = await startOverMcp(ada);
      feed.end();
      expect(await getJson(`${sseUrl}/events`, { ...ada, 'x-user': 'carol' })).toMatchObject(notFound);
      expect((await getJson(`${sseUrl}/events`, ada)).status).toBe(200);
    });
  });

  it('the issuer\'s keys out of reach: 503 -32603 with Retry-After and no challenge (the token may be fine), before a 404 or 405 too', async () => {
    const port = await freePort();
    const unreachable = await NestFactory.create<INestApplication>(moduleFor(site.resource, site.as.issuer, `http://127.0.0.1:${await freePort()}/jwks`), testAdapter(), {
      logger: new CapturingLogger(),
    });
    await unreachable.listen(port, '127.0.0.1');
    try {
      const bearerOf = await bearer();
      // The attach, a 405 and the catch-all alike: the token cannot be judged, so neither 404 nor 405 is said.
      for (const [path, method] of [
        ['/rpc/streams/3afeeefd-8e17-4a2c-b493-c4a63e69ff0f', 'GET'],
        ['/rpc/streams', 'POST'],
        ['/rpc/streams/3afeeefd-8e17-4a2c-b493-c4a63e69ff0f/events', 'DELETE'],
        ['/rpc/streams/3afeeefd-8e17-4a2c-b493-c4a63e69ff0f/deeper', 'GET'],
      ] as const) {
        const res = await fetch(`http://127.0.0.1:${port}${path}`, { method, headers: bearerOf });
        expect([path, method, res.status, res.headers.get('www-authenticate'), res.headers.get('retry-after'), res.headers.get('allow'), await res.json()]).toEqual([
          path,
          method,
          503,
          null,
          '3',
          null,
          { error: { code: -32603, message: "Token verification unavailable: The authorization server's signing keys could not be fetched" } },
        ]);
      }
      // No token: nothing to verify, so the keys do not matter: 405 and 404 as ever.
      const post = await fetch(`http://127.0.0.1:${port}/rpc/streams`, { method: 'POST' });
      expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET']);
      expect((await fetch(`http://127.0.0.1:${port}/rpc/streams/x/y`)).status).toBe(404);
    } finally {
      await unreachable.close();
    }
  });
});
