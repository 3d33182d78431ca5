import { requestUser } from '../../context/caller-identity.js';
import type { RpcHttpExchange } from '../../context/rpc-context.js';
import type { ResolvedMcpAuthOptions } from '../../options/mcp-auth-options.js';
import type { RpcAccessRule } from '../../security/rpc-access-rule.js';
import { bearerChallenge, type BearerChallenge } from './bearer-challenge.js';
import { McpJwtVerifier, type McpTokenUser } from './jwt-bearer-verifier.js';
import { metadataPaths, metadataUrl, protectedResourceMetadata } from './protected-resource-metadata.js';
import { McpScopeRoles } from './scope-roles.js';

/** The credentials of one request, as the route reads them. */
export interface McpCredentials {
  /** The `Authorization` header (an array when sent more than once). */
  readonly authorization: string | readonly string[] | undefined;
  /** The raw query string (without `?`), or undefined. */
  readonly query: string | undefined;
}

export type McpAuthentication =
  /** No bearer token (or no built-in verifier): who is calling is what the app's own hooks said. */
  | { readonly kind: 'app' }
  /** The built-in verifier accepted the token: the route sets `request.user`. */
  | { readonly kind: 'user'; readonly user: McpTokenUser }
  /** Refused before dispatch: a token in the query string, several `Authorization` headers, an invalid token. */
  | { readonly kind: 'refused'; readonly challenge: BearerChallenge }
  /** The issuer's keys could not be fetched: 503, nothing is decided about the caller. */
  | { readonly kind: 'unavailable'; readonly message: string };

/** What `admit` refuses a request with: a challenge, or 503 when the issuer's keys cannot be fetched. */
export type McpAdmissionRefusal = BearerChallenge | { readonly status: 503; readonly error: { code: number; message: string } };

/**
 * What `identify` found: a refusal to send; the token's caller (now `request.user`); or nothing
 * to add (the app's own identity, no token, another scheme).
 */
export type McpIdentification =
  | { readonly kind: 'refused'; readonly refusal: McpAdmissionRefusal }
  | { readonly kind: 'token' }
  | { readonly kind: 'app' };

const BY_APP: McpIdentification = Object.freeze({ kind: 'app' });
const BY_TOKEN: McpIdentification = Object.freeze({ kind: 'token' });

/** How a call was refused by the app's code (a guard's exception, or -32001), when it was. */
export type McpCallDenial = 'unauthorized' | 'forbidden';

/** Longest bearer token looked at; longer ones are refused unread (a JWT is a few KB at most). */
export const MAX_BEARER_TOKEN_LENGTH = 8192;

/** RFC 6750 §2.1 b64token. */
const B64_TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;
const QUERY_TOKEN = /(?:^|&)access_token=/;

const NONE: McpAuthentication = Object.freeze({ kind: 'app' });

/**
 * The MCP endpoint as an OAuth 2.1 resource server (`mcp.auth`): the Protected Resource Metadata
 * document and where it is served, what a request's credentials say, and which challenge a call
 * that needs identity gets. Pure decisions: the routes read the request and write the answers.
 *
 * The rules: a caller without credentials whose call needs identity (the tool has roles, or a
 * guard threw `UnauthorizedException`/`ForbiddenException`) gets 401 with the scopes the tool
 * needs; an authenticated caller whose roles fall short gets 403 `insufficient_scope` (the client
 * steps up); an authenticated caller a guard refused as unauthorized gets 401 `invalid_token`.
 */
export class McpResourceServer {
  readonly scopeRoles: McpScopeRoles;
  /** Where the metadata is served: the path-suffixed form first, then the root form. */
  readonly metadataPaths: readonly string[];
  /** The `resource_metadata` URL challenges name. */
  readonly metadataUrl: string;
  private readonly verifier: McpJwtVerifier | undefined;
  private metadata: string | undefined;

  constructor(
    readonly options: ResolvedMcpAuthOptions,
    /**
     * Every scope a tool needs, for `scopes_supported` when the options do not list them. Asked
     * once, on first use: the tool catalog is built with this server's scope mapping.
     */
    private readonly toolScopes: (scopeRoles: McpScopeRoles) => readonly string[],
  ) {
    this.scopeRoles = new McpScopeRoles(options.scopeRoles);
    this.metadataPaths = metadataPaths(options.resource);
    this.metadataUrl = metadataUrl(options.resource);
    this.verifier = options.jwt ? new McpJwtVerifier(options.jwt, this.scopeRoles) : undefined;
  }

  /** The metadata document, serialised once. */
  get metadataJson(): string {
    this.metadata ??= JSON.stringify(protectedResourceMetadata(this.options, this.options.scopesSupported ?? this.toolScopes(this.scopeRoles)));
    return this.metadata;
  }

  /** What the request's credentials say, before anything is dispatched. */
  async authenticate(credentials: McpCredentials): Promise<McpAuthentication> {
    if (credentials.query !== undefined && QUERY_TOKEN.test(credentials.query)) {
      return this.refused('invalid_request', 'Access tokens are not accepted in the query string; send them in the Authorization header');
    }
    const header = credentials.authorization;
    if (header === undefined) return NONE;
    if (typeof header !== 'string') return this.refused('invalid_request', 'Send one Authorization header');
    const space = header.indexOf(' ');
    const scheme = space === -1 ? header : header.slice(0, space);
    // Another scheme (Basic, an API key…) is the app's business; so is every token without the built-in verifier.
    if (scheme.toLowerCase() !== 'bearer' || !this.verifier) return NONE;
    const token = header.slice(space + 1).trim();
    if (token.length === 0 || token.length > MAX_BEARER_TOKEN_LENGTH || !B64_TOKEN.test(token)) {
      return this.refused('invalid_token', 'The access token is malformed');
    }
    const verdict = await this.verifier.verify(token);
    if (verdict.ok) return { kind: 'user', user: verdict.user };
    if (verdict.unavailable) return { kind: 'unavailable', message: verdict.description };
    return this.refused('invalid_token', verdict.description);
  }

  /**
   * A request's credentials, before it is dispatched: the built-in verifier's user becomes
   * `request.user`. A caller the app's own hooks already identified (its own tokens, a session)
   * is the app's: its `Authorization` is not the verifier's to judge. Answers the refusal to send
   * instead, when there is one (503: the issuer's keys cannot be fetched).
   */
  async admit(exchange: RpcHttpExchange): Promise<McpAdmissionRefusal | undefined> {
    const mark = exchange.raw.url?.indexOf('?') ?? -1;
    const found = await this.settle(exchange, mark < 0 ? undefined : exchange.raw.url!.slice(mark + 1));
    return found.kind === 'refused' ? found.refusal : undefined;
  }

  /**
   * `admit` for the routes MCP answers point to outside MCP — a durable tool's `sse_url` — so the
   * token that started a stream reads it (json-rpc-server.ts hands this to the durable routes when
   * `jwt` is set). The same verifier and refusals, the same precedence of the app's identity, on
   * the `Authorization` header only: the query string of those routes is not MCP's (an app may
   * identify `EventSource` clients there itself), so `access_token` there is neither read nor refused.
   * Says whether the token named the caller: those routes' 403 for missing roles then carries
   * {@link insufficientScope}'s challenge, as `/mcp`'s does.
   */
  identify(exchange: RpcHttpExchange): Promise<McpIdentification> {
    return this.settle(exchange, undefined);
  }

  private async settle(exchange: RpcHttpExchange, query: string | undefined): Promise<McpIdentification> {
    const request = exchange.request as { user?: unknown };
    const identified = requestUser(request) !== undefined;
    const outcome = await this.authenticate({ authorization: identified ? undefined : exchange.headers.authorization, query });
    switch (outcome.kind) {
      case 'app':
        return BY_APP;
      case 'user': {
        request.user = outcome.user;
        return BY_TOKEN;
      }
      case 'refused':
        return { kind: 'refused', refusal: outcome.challenge };
      case 'unavailable':
        return { kind: 'refused', refusal: { status: 503, error: { code: -32603, message: `Token verification unavailable: ${outcome.message}` } } };
    }
  }

  /**
   * Before a call of a tool with `access`: the challenge when the caller's roles fall short (401
   * without credentials, 403 `insufficient_scope` with them), undefined when they suffice.
   */
  challengeBefore(access: RpcAccessRule | undefined, roles: readonly string[], authenticated: boolean): BearerChallenge | undefined {
    if (!access || access.allows(roles)) return undefined;
    return authenticated ? this.insufficientScope(access) : bearerChallenge('unauthenticated', this.metadataUrl, this.scopeRoles.scopesFor(access));
  }

  /**
   * 403 `insufficient_scope` naming the scopes `access` needs (RFC 6750 §3.1): the step-up of an
   * authenticated caller whose roles fall short — of a tool before its call, of a durable stream's
   * method on the durable routes.
   */
  insufficientScope(access: RpcAccessRule | undefined): BearerChallenge {
    return bearerChallenge('insufficient_scope', this.metadataUrl, this.scopeRoles.scopesFor(access));
  }

  /**
   * After a call the app's code refused: the challenge that lets the client authenticate or step
   * up, or undefined when the refusal stays a tool error (an authenticated caller refused by a
   * guard of a tool that names no roles: no scope would help).
   */
  challengeAfter(denial: McpCallDenial, access: RpcAccessRule | undefined, authenticated: boolean): BearerChallenge | undefined {
    const scopes = this.scopeRoles.scopesFor(access);
    if (!authenticated) return bearerChallenge('unauthenticated', this.metadataUrl, scopes);
    if (denial === 'unauthorized') return bearerChallenge('invalid_token', this.metadataUrl, scopes);
    return scopes.length ? bearerChallenge('insufficient_scope', this.metadataUrl, scopes) : undefined;
  }

  private refused(reason: 'invalid_request' | 'invalid_token', description: string): McpAuthentication {
    return { kind: 'refused', challenge: bearerChallenge(reason, this.metadataUrl, [], description) };
  }
}
