/**
 * OAuth 2.1 for the MCP suites: the demo's local authorization server (PKCE, the `resource` of
 * RFC 8707 as the token's audience, the scopes asked for at /authorize in the token) and an MCP
 * client OAuth provider whose "browser" follows the authorization redirect itself, so the SDK
 * clients run their whole flow unattended.
 */
import { createServer } from 'node:net';
import { startOAuthDevServer, type OAuthDevServer } from '../../../apps/demo/scripts/oauth-dev-server.mjs';

export type TestAuthorizationServer = OAuthDevServer;

/** The demo's development authorization server (apps/demo/scripts/oauth-dev-server.mjs), on a free port. */
export function startAuthorizationServer(): Promise<TestAuthorizationServer> {
  return startOAuthDevServer();
}

/** A free port of 127.0.0.1 (the MCP resource URL must be known before the app starts). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/**
 * What an OAuth suite sets up before its app starts: the authorization server, a free port, and
 * the addresses derived from it — the app's base URL, the MCP resource (`<base>/mcp`) and the
 * Protected Resource Metadata URL its challenges name.
 */
export interface OAuthTestSite {
  readonly as: TestAuthorizationServer;
  readonly port: number;
  readonly base: string;
  readonly resource: string;
  readonly metadataUrl: string;
}

/** Starts the authorization server and picks the port the app under test will listen on (`mcp.path` `/mcp`). */
export async function startOAuthTestSite(): Promise<OAuthTestSite> {
  const as = await startAuthorizationServer();
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  return { as, port, base, resource: `${base}/mcp`, metadataUrl: `${base}/.well-known/oauth-protected-resource/mcp` };
}

/**
 * The SDK's `OAuthClientProvider` for a pre-registered public client. `redirectToAuthorization`
 * plays the user's browser: it follows the authorization URL and keeps the code the authorization
 * server redirects back with; the caller then finishes the flow (`transport.finishAuth(code)`).
 */
export class UnattendedOAuthProvider {
  readonly redirectUrl = 'http://127.0.0.1:9/callback';
  readonly clientMetadata = {
    client_name: 'nest-jsonrpc MCP tests',
    redirect_uris: [this.redirectUrl],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
  /** Every authorization URL the client was sent to. */
  readonly authorizations: URL[] = [];
  code: string | undefined;
  private savedTokens: { access_token: string; scope?: string } | undefined;
  private verifier: string | undefined;
  private discovery: unknown;

  saveDiscoveryState(state: unknown) {
    this.discovery = state;
  }

  discoveryState() {
    return this.discovery as never;
  }

  clientInformation() {
    return { client_id: 'mcp-test-client' };
  }

  tokens() {
    return this.savedTokens as never;
  }

  saveTokens(tokens: { access_token: string; scope?: string }) {
    this.savedTokens = tokens;
  }

  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }

  codeVerifier() {
    if (!this.verifier) throw new Error('no code verifier saved');
    return this.verifier;
  }

  async redirectToAuthorization(url: URL) {
    this.authorizations.push(url);
    const res = await fetch(url, { redirect: 'manual' });
    const location = res.headers.get('location');
    if (!location) throw new Error(`the authorization server did not redirect (${res.status})`);
    this.code = new URL(location).searchParams.get('code') ?? undefined;
  }

  /** The access token the client holds now. */
  get accessToken(): string | undefined {
    return this.savedTokens?.access_token;
  }
}
