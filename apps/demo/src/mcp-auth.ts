import type { JsonRpcMcpOptions } from '@nest-jsonrpc/server';

/**
 * The demo's MCP endpoint as an OAuth 2.1 resource server, when `MCP_OAUTH_ISSUER` names an
 * authorization server (try `node apps/demo/scripts/oauth-dev-server.mjs`): agents connecting to
 * `/mcp` are challenged for the tools that need a role, discover that server through the
 * Protected Resource Metadata, and come back with a JWT the module verifies. A token's scopes are
 * the demo's roles (`user`, `admin`). Read at startup:
 * - `MCP_OAUTH_ISSUER`: the issuer URL (off when unset);
 * - `MCP_OAUTH_RESOURCE`: this endpoint's URL as clients name it (default
 *   `http://<HOST or 127.0.0.1>:<PORT or 3000>/mcp`, where `npm start` listens);
 * - `MCP_OAUTH_JWKS_URI`: the issuer's keys (default `<issuer>/jwks`, the dev server's).
 * The demo's own `auth.login` tokens keep working on `/mcp` beside the JWTs.
 */
export function demoMcpAuth(env: NodeJS.ProcessEnv = process.env): JsonRpcMcpOptions['auth'] {
  const issuer = env.MCP_OAUTH_ISSUER;
  if (!issuer) return undefined;
  const resource = env.MCP_OAUTH_RESOURCE ?? `http://${env.HOST ?? '127.0.0.1'}:${env.PORT ?? 3000}/mcp`;
  return {
    resource,
    authorizationServers: [issuer],
    resourceName: 'nest-jsonrpc demo',
    jwt: { jwksUri: env.MCP_OAUTH_JWKS_URI ?? `${issuer.replace(/\/+$/, '')}/jwks` },
  };
}
