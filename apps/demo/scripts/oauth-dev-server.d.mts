import type { OAuth2Server } from 'oauth2-mock-server';

export interface OAuthDevServer {
  readonly issuer: string;
  readonly server: OAuth2Server;
  /** Every /authorize request, as the client sent it (scope, resource, PKCE...). */
  readonly authorizeRequests: URLSearchParams[];
  /** Whether token responses carry a refresh token (default true). */
  issueRefreshTokens: boolean;
  /** A token as this server would issue it, claims overridden (`exp` via `expiresIn` seconds). */
  token(claims: Record<string, unknown>, expiresIn?: number): Promise<string>;
  stop(): Promise<void>;
}

export function startOAuthDevServer(options?: { port?: number; host?: string }): Promise<OAuthDevServer>;
