#!/usr/bin/env node
/**
 * A local OAuth 2.1 authorization server for trying the demo's MCP endpoint with a real MCP
 * client (the MCP Inspector, Claude Code, an SDK client): oauth2-mock-server (a devDependency)
 * made to behave as an authorization server for MCP does — PKCE, the `resource` the client names
 * (RFC 8707) as the token's audience, the scopes asked for at /authorize in the token, a refresh
 * that cannot widen the grant. Every authorization is granted at once (there is no login page):
 * a development tool, never a production server. The MCP tests start it too.
 *
 *   node apps/demo/scripts/oauth-dev-server.mjs          # http://localhost:8080 (PORT overrides)
 *   MCP_OAUTH_ISSUER=http://localhost:8080 npm start     # the demo as its resource server
 */
import { OAuth2Server } from 'oauth2-mock-server';

/**
 * Starts the server on `port` (0: a free one) of `host`; resolves with its issuer URL, the
 * /authorize requests it saw, a token minter for tests, a switch for refresh tokens, and `stop`.
 */
export async function startOAuthDevServer({ port = 0, host = '127.0.0.1' } = {}) {
  const server = new OAuth2Server();
  await server.issuer.keys.generate('RS256');
  await server.start(port, host);
  const issuer = server.issuer.url;
  const authorizeRequests = [];
  const granted = new Map();
  const refreshed = new Map();
  const handle = {
    issuer,
    server,
    authorizeRequests,
    /** Whether token responses carry a refresh token. */
    issueRefreshTokens: true,
    /** A token as this server would issue it, claims overridden (`exp` via `expiresIn` seconds). */
    token: (claims, expiresIn) => server.issuer.buildToken({ expiresIn, scopesOrTransform: (_header, payload) => Object.assign(payload, claims) }),
    stop: () => server.stop(),
  };
  server.service.on('beforeAuthorizeRedirect', (redirect, req) => {
    const query = new URL(req.url ?? '/', issuer).searchParams;
    authorizeRequests.push(query);
    const code = redirect.url.searchParams.get('code');
    if (code) granted.set(code, { scope: query.get('scope') ?? undefined, resource: query.get('resource') ?? undefined });
  });
  const grantOf = (body) =>
    typeof body?.code === 'string' ? granted.get(body.code) : typeof body?.refresh_token === 'string' ? refreshed.get(body.refresh_token) : undefined;
  const widens = (body, grant) =>
    body?.grant_type === 'refresh_token' && typeof body.scope === 'string' && body.scope.split(' ').some((s) => !(grant.scope ?? '').split(' ').includes(s));
  // The access token carries what was granted at /authorize, for the resource the client named.
  server.service.on('beforeTokenSigning', (token, req) => {
    const grant = grantOf(req.body);
    if (!grant) return;
    if (grant.scope !== undefined) token.payload.scope = grant.scope;
    token.payload.aud = req.body?.resource ?? grant.resource;
  });
  server.service.on('beforeResponse', (response, req) => {
    const grant = grantOf(req.body);
    if (!grant) return;
    if (widens(req.body, grant)) {
      response.statusCode = 400;
      response.body = { error: 'invalid_scope', error_description: 'a refresh cannot widen the grant' };
      return;
    }
    if (!handle.issueRefreshTokens) delete response.body.refresh_token;
    if (typeof response.body.refresh_token === 'string') refreshed.set(response.body.refresh_token, grant);
    if (grant.scope !== undefined) response.body.scope = grant.scope;
  });
  return handle;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const dev = await startOAuthDevServer({ port: Number(process.env.PORT ?? 8080), host: process.env.HOST ?? 'localhost' });
  console.log(`OAuth dev authorization server on ${dev.issuer} (JWKS ${dev.issuer}/jwks). Every authorization is granted.`);
  console.log(`Run the demo as its resource server: MCP_OAUTH_ISSUER=${dev.issuer} npm start`);
}
