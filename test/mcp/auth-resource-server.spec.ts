/**
 * The resource server's decisions (`mcp.auth`), against a real authorization server started here
 * (oauth2-mock-server, its JWKS over HTTP): the metadata document and its paths, what a request's
 * credentials say (valid, expired, wrong issuer, wrong audience, forged, malformed, huge, in the
 * query string, keys unreachable), how scopes map to roles and back, and which challenge a call
 * gets. The HTTP answers built from these are tested end to end in oauth.e2e-spec.ts.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, generateKeyPair } from 'jose';
import { OAuth2Server } from 'oauth2-mock-server';
import type { RpcHttpExchange } from '../../libs/server/src/context/rpc-context.js';
import { McpResourceServer } from '../../libs/server/src/mcp/auth/mcp-resource-server.js';
import { bearerChallenge } from '../../libs/server/src/mcp/auth/bearer-challenge.js';
import { OptionProblems } from '../../libs/server/src/options/option-checks.js';
import { resolveMcpAuthOptions, type JsonRpcMcpAuthOptions } from '../../libs/server/src/options/mcp-auth-options.js';
import { RpcAccessRule } from '../../libs/server/src/security/rpc-access-rule.js';

const RESOURCE = 'https://api.example.com/mcp';

function resolve(options: JsonRpcMcpAuthOptions) {
  const problems = new OptionProblems();
  const resolved = resolveMcpAuthOptions(options, problems);
  return { resolved: resolved!, problems: problems.list };
}

describe('mcp.auth options', () => {
  it('resolves the defaults: audience = resource, issuer = the one authorization server, asymmetric algorithms, 5 s skew', () => {
    const { resolved, problems } = resolve({ resource: RESOURCE, authorizationServers: ['https://as.example.com'], jwt: { jwksUri: 'https://as.example.com/jwks' } });
    expect(problems).toEqual([]);
    expect(resolved.jwt).toEqual({
      issuer: 'https://as.example.com',
      audience: [RESOURCE],
      jwksUri: 'https://as.example.com/jwks',
      algorithms: ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'],
      clockToleranceSeconds: 5,
    });
  });

  it('lists every problem at once', () => {
    const { problems } = resolve({
      resource: 'api.example.com/mcp#x',
      authorizationServers: [],
      scopesSupported: [''],
      documentation: 'docs',
      scopeRoles: { a: [] as string[] },
      jwt: { jwksUri: 'file:///keys', algorithms: ['HS256'], clockToleranceSeconds: 1000, extra: 1 } as never,
      other: true,
    } as never);
    expect(problems).toEqual([
      'Unknown option "mcp.auth.other"',
      '"mcp.auth.resource" must be an absolute http(s) URL without a fragment, e.g. "https://api.example.com/mcp"',
      '"mcp.auth.authorizationServers" must be a non-empty array of non-empty strings',
      '"mcp.auth.scopesSupported" must be an array of non-empty strings',
      '"mcp.auth.documentation" must be an absolute http(s) URL',
      '"mcp.auth.scopeRoles.a" must be a non-empty array of non-empty strings',
      'Unknown option "mcp.auth.jwt.extra"',
      '"mcp.auth.jwt.issuer" is required when "mcp.auth.authorizationServers" does not name exactly one issuer',
      '"mcp.auth.jwt.jwksUri" must be an absolute http(s) URL (the issuer\'s JWKS)',
      '"mcp.auth.jwt.algorithms" takes asymmetric algorithms only (a JWKS holds public keys); got HS256',
      '"mcp.auth.jwt.clockToleranceSeconds" must be at most 300, got 1000',
    ]);
  });
});

describe('Protected Resource Metadata', () => {
  it('is served at the path-suffixed form of the resource and the root form; challenges name the suffixed one', () => {
    const server = new McpResourceServer(
      resolve({ resource: RESOURCE, authorizationServers: ['https://as.example.com'], resourceName: 'Billing', documentation: 'https://docs.example.com/mcp' }).resolved,
      () => ['reports:read'],
    );
    expect(server.metadataPaths).toEqual(['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']);
    expect(server.metadataUrl).toBe('https://api.example.com/.well-known/oauth-protected-resource/mcp');
    expect(JSON.parse(server.metadataJson)).toEqual({
      resource: RESOURCE,
      authorization_servers: ['https://as.example.com'],
      scopes_supported: ['reports:read'],
      bearer_methods_supported: ['header'],
      resource_name: 'Billing',
      resource_documentation: 'https://docs.example.com/mcp',
    });
  });

  it('a resource at the root has the root form only; listed scopes win over the tools\' scopes; no scope, no scopes_supported', () => {
    const root = new McpResourceServer(resolve({ resource: 'https://api.example.com/', authorizationServers: ['https://as.example.com'], scopesSupported: ['a', 'b'] }).resolved, () => ['x']);
    expect(root.metadataPaths).toEqual(['/.well-known/oauth-protected-resource']);
    expect(root.metadataUrl).toBe('https://api.example.com/.well-known/oauth-protected-resource');
    expect(JSON.parse(root.metadataJson).scopes_supported).toEqual(['a', 'b']);
    const none = new McpResourceServer(resolve({ resource: RESOURCE, authorizationServers: ['https://as.example.com'] }).resolved, () => []);
    expect(JSON.parse(none.metadataJson)).not.toHaveProperty('scopes_supported');
  });
});

describe('scopes and roles, both ways', () => {
  const server = new McpResourceServer(
    resolve({ resource: RESOURCE, authorizationServers: ['https://as.example.com'], scopeRoles: { 'reports:read': 'reader', 'reports:all': ['reader', 'auditor'] } }).resolved,
    () => [],
  );
  it('a scope grants its mapped roles; an unmapped scope is a role of its own name', () => {
    expect(server.scopeRoles.rolesOf(['reports:read', 'admin', 'reports:all'])).toEqual(['reader', 'admin', 'auditor']);
    expect(server.scopeRoles.rolesOf([])).toEqual([]);
  });
  it('a rule asks for the scopes granting its roles: all of them under rolesMatch "all", the first role\'s under "any"', () => {
    expect(server.scopeRoles.scopesFor(new RpcAccessRule(['reader', 'auditor'], 'all', false))).toEqual(['reports:read', 'reports:all']);
    expect(server.scopeRoles.scopesFor(new RpcAccessRule(['auditor', 'reader'], 'any', false))).toEqual(['reports:all']);
    expect(server.scopeRoles.scopesFor(new RpcAccessRule(['admin'], 'any', false))).toEqual(['admin']);
    expect(server.scopeRoles.scopesFor(undefined)).toEqual([]);
  });
});

describe('challenges', () => {
  const server = new McpResourceServer(resolve({ resource: RESOURCE, authorizationServers: ['https://as.example.com'] }).resolved, () => []);
  const reader = new RpcAccessRule(['reader'], 'any', false);
  const metadata = 'resource_metadata="https://api.example.com/.well-known/oauth-protected-resource/mcp"';

  it('before a call: 401 without credentials, 403 insufficient_scope with them, nothing when the roles suffice or the tool is public', () => {
    expect(server.challengeBefore(reader, [], false)).toEqual({
      status: 401,
      wwwAuthenticate: `Bearer ${metadata}, scope="reader"`,
      error: { code: -32001, message: 'Authentication required', data: { scope: 'reader' } },
    });
    expect(server.challengeBefore(reader, ['writer'], true)).toEqual({
      status: 403,
      wwwAuthenticate: `Bearer error="insufficient_scope", ${metadata}, scope="reader"`,
      error: { code: -32001, message: 'Insufficient scope', data: { scope: 'reader' } },
    });
    expect(server.challengeBefore(reader, ['reader'], true)).toBeUndefined();
    expect(server.challengeBefore(undefined, [], false)).toBeUndefined();
  });

  it('after a guard refused: 401 for anonymous callers, 401 invalid_token for an unauthorized one, 403 only when scopes would help', () => {
    expect(server.challengeAfter('forbidden', undefined, false)?.wwwAuthenticate).toBe(`Bearer ${metadata}`);
    expect(server.challengeAfter('unauthorized', reader, true)?.wwwAuthenticate).toBe(`Bearer error="invalid_token", ${metadata}, scope="reader"`);
    expect(server.challengeAfter('forbidden', reader, true)?.status).toBe(403);
    expect(server.challengeAfter('forbidden', undefined, true)).toBeUndefined();
  });

  it('keeps a description inside its quoted-string', () => {
    expect(bearerChallenge('invalid_token', 'https://x/m', [], 'bad "token"\n\\').wwwAuthenticate).toBe('Bearer error="invalid_token", error_description="bad ?token???", resource_metadata="https://x/m"');
  });
});

describe('bearer tokens through the built-in verifier (a real authorization server)', () => {
  let as: OAuth2Server;
  let server: McpResourceServer;
  let issuer: string;
  let keysDown: { url: string; close: () => Promise<void> };

  beforeAll(async () => {
    as = new OAuth2Server();
    await as.issuer.keys.generate('RS256');
    await as.start(0, '127.0.0.1');
    issuer = as.issuer.url!;
    server = new McpResourceServer(
      resolve({ resource: RESOURCE, authorizationServers: [issuer], scopeRoles: { 'reports:read': 'reader' }, jwt: { jwksUri: `${issuer}/jwks` } }).resolved,
      () => [],
    );
    // A "JWKS" endpoint that answers 500: the keys cannot be had.
    const broken = createServer((_req, res) => res.writeHead(500).end());
    await new Promise<void>((r) => broken.listen(0, '127.0.0.1', r));
    keysDown = { url: `http://127.0.0.1:${(broken.address() as AddressInfo).port}/jwks`, close: () => new Promise((r) => broken.close(() => r())) };
  });
  afterAll(async () => {
    await as.stop();
    await keysDown.close();
  });

  const token = (claims: Record<string, unknown>, expiresIn?: number) =>
    as.issuer.buildToken({ expiresIn, scopesOrTransform: (_h, payload) => Object.assign(payload, { aud: RESOURCE, sub: 'ada', ...claims }) });
  const auth = (header: string | string[] | undefined, query?: string) => server.authenticate({ authorization: header, query });
  const refusedWith = (reason: string, description: string) => ({
    kind: 'refused',
    challenge: expect.objectContaining({ wwwAuthenticate: `Bearer error="${reason}", error_description="${description}", resource_metadata="https://api.example.com/.well-known/oauth-protected-resource/mcp"` }),
  });

  it('a valid token becomes the user: sub as id, scopes, and the roles they grant', async () => {
    const verdict = await auth(`Bearer ${await token({ scope: 'reports:read openid' })}`);
    expect(verdict).toMatchObject({ kind: 'user', user: { id: 'ada', sub: 'ada', scopes: ['reports:read', 'openid'], roles: ['reader', 'openid'] } });
    const scp = await auth(`bearer ${await token({ scp: ['reports:read'] })}`);
    expect(scp).toMatchObject({ kind: 'user', user: { scopes: ['reports:read'], roles: ['reader'] } });
  });

  it('no credentials, or another scheme: the app decides who is calling', async () => {
    expect(await auth(undefined)).toEqual({ kind: 'app' });
    expect(await auth('Basic dXNlcjpwYXNz')).toEqual({ kind: 'app' });
  });

  it('refuses an expired token, a wrong issuer, a token for another resource, one without exp', async () => {
    expect(await auth(`Bearer ${await token({}, -60)}`)).toMatchObject(refusedWith('invalid_token', 'The access token expired'));
    expect(await auth(`Bearer ${await token({ iss: 'https://evil.example.com' })}`)).toMatchObject(refusedWith('invalid_token', 'The access token was issued by an unexpected issuer'));
    expect(await auth(`Bearer ${await token({ aud: 'https://other.example.com/mcp' })}`)).toMatchObject(refusedWith('invalid_token', 'The access token is for another resource'));
    expect(await auth(`Bearer ${await token({ exp: undefined })}`)).toMatchObject(refusedWith('invalid_token', 'The access token\'s exp claim is not valid'));
  });

  it('refuses forged tokens: another key with the same kid, alg none, HS256 signed with the public key', async () => {
    const real = await token({});
    const [header] = real.split('.');
    const { kid } = JSON.parse(Buffer.from(header, 'base64url').toString());
    const { privateKey } = await generateKeyPair('RS256');
    const forged = await new SignJWT({ sub: 'mallory', aud: RESOURCE, iss: issuer, exp: Math.floor(Date.now() / 1000) + 60 }).setProtectedHeader({ alg: 'RS256', kid }).sign(privateKey);
    expect(await auth(`Bearer ${forged}`)).toMatchObject(refusedWith('invalid_token', 'The access token signature is not valid'));
    const body = Buffer.from(JSON.stringify({ sub: 'mallory', aud: RESOURCE, iss: issuer, exp: Math.floor(Date.now() / 1000) + 60 })).toString('base64url');
    const none = `${Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url')}.${body}.`;
    expect(await auth(`Bearer ${none}`)).toMatchObject(refusedWith('invalid_token', 'The access token is signed with an algorithm that is not accepted'));
    const hs = await new SignJWT({ sub: 'mallory', aud: RESOURCE, iss: issuer, exp: Math.floor(Date.now() / 1000) + 60 })
      .setProtectedHeader({ alg: 'HS256', kid })
      .sign(new TextEncoder().encode(JSON.stringify(as.issuer.keys.toJSON())));
    expect(await auth(`Bearer ${hs}`)).toMatchObject(refusedWith('invalid_token', 'The access token is signed with an algorithm that is not accepted'));
  });

  it('refuses malformed and oversized tokens unread, a token in the query string, two Authorization headers', async () => {
    for (const bad of ['Bearer', 'Bearer ', 'Bearer a b', 'Bearer not.a"jwt', `Bearer ${'a'.repeat(8193)}`]) {
      expect(await auth(bad)).toMatchObject(refusedWith('invalid_token', 'The access token is malformed'));
    }
    expect(await auth('Bearer abc.def.ghi')).toMatchObject(refusedWith('invalid_token', 'The access token is malformed'));
    expect(await auth(undefined, 'x=1&access_token=abc')).toMatchObject({
      kind: 'refused',
      challenge: { status: 400, error: { code: -32600, message: 'Invalid request: Access tokens are not accepted in the query string; send them in the Authorization header' } },
    });
    expect(await auth(['Bearer a', 'Bearer b'])).toMatchObject({ kind: 'refused', challenge: { status: 400 } });
  });

  it('admit (the MCP routes) and identify (the durable routes): the token becomes request.user, the app\'s identity wins, only admit reads the query', async () => {
    const exchange = (url: string, authorization: string | undefined, user?: unknown) =>
      ({ raw: { url }, headers: authorization === undefined ? {} : { authorization }, request: user === undefined ? {} : { user } }) as unknown as RpcHttpExchange;
    const valid = `Bearer ${await token({ scope: 'reports:read' })}`;
    const malformed = { status: 401, error: { message: 'Invalid access token: The access token is malformed' } };
    // admit answers the refusal or nothing; identify also says whether the token named the caller.
    const signedIn = exchange('/rpc/streams', valid);
    expect(await server.admit(signedIn)).toBeUndefined();
    expect(signedIn.request).toMatchObject({ user: { id: 'ada', roles: ['reader'] } });
    const theApps = exchange('/rpc/streams', 'Bearer abc.def.ghi', { id: 'carol' });
    expect(await server.admit(theApps)).toBeUndefined();
    expect(theApps.request).toEqual({ user: { id: 'carol' } });
    expect(await server.admit(exchange('/rpc/streams', 'Bearer abc.def.ghi'))).toMatchObject(malformed);

    const identified = exchange('/rpc/streams', valid);
    expect(await server.identify(identified)).toEqual({ kind: 'token' });
    expect(identified.request).toMatchObject({ user: { id: 'ada', roles: ['reader'] } });
    const theAppsToo = exchange('/rpc/streams', 'Bearer abc.def.ghi', { id: 'carol' });
    expect(await server.identify(theAppsToo)).toEqual({ kind: 'app' });
    expect(theAppsToo.request).toEqual({ user: { id: 'carol' } });
    expect(await server.identify(exchange('/rpc/streams', undefined))).toEqual({ kind: 'app' });
    expect(await server.identify(exchange('/rpc/streams', 'Bearer abc.def.ghi'))).toMatchObject({ kind: 'refused', refusal: malformed });

    const queryToken = await token({});
    expect(await server.admit(exchange(`/mcp?access_token=${queryToken}`, undefined))).toMatchObject({ status: 400 });
    const fromQuery = exchange(`/rpc/streams/x?access_token=${queryToken}`, undefined);
    expect(await server.identify(fromQuery)).toEqual({ kind: 'app' });
    expect(fromQuery.request).toEqual({});
  });

  it('insufficientScope: the 403 step-up challenge of a rule, the one challengeBefore sends an authenticated caller', () => {
    const rule = new RpcAccessRule(['reader'], 'any', true);
    const challenge = server.insufficientScope(rule);
    expect(challenge).toEqual({
      status: 403,
      wwwAuthenticate: `Bearer error="insufficient_scope", resource_metadata="${server.metadataUrl}", scope="reports:read"`,
      error: { code: -32001, message: 'Insufficient scope', data: { scope: 'reports:read' } },
    });
    expect(server.challengeBefore(rule, [], true)).toEqual(challenge);
  });

  it('keys that cannot be fetched leave the token undecided (unavailable), not refused', async () => {
    const down = new McpResourceServer(resolve({ resource: RESOURCE, authorizationServers: [issuer], jwt: { jwksUri: keysDown.url } }).resolved, () => []);
    expect(await down.authenticate({ authorization: `Bearer ${await token({})}`, query: undefined })).toEqual({
      kind: 'unavailable',
      message: "The authorization server's signing keys could not be fetched",
    });
  });
});
