import { createRemoteJWKSet, errors, jwtVerify, type JWTHeaderParameters, type JWTPayload, type FlattenedJWSInput } from 'jose';
import type { ResolvedMcpJwtOptions } from '../../options/mcp-auth-options.js';
import type { McpScopeRoles } from './scope-roles.js';

/** What the built-in verifier sets as `request.user` for a valid token. */
export interface McpTokenUser {
  /** `sub`: the caller's id (durable streams and tasks belong to it; `userIdResolver` reads it). */
  readonly id: string | undefined;
  readonly sub: string | undefined;
  /** The token's scopes (`scope`, space separated, or `scp`, a list). */
  readonly scopes: readonly string[];
  /** The roles the scopes grant (`mcp.auth.scopeRoles`): what the methods' `roles` are checked against. */
  readonly roles: readonly string[];
  /** Every verified claim. */
  readonly claims: JWTPayload;
}

export type JwtVerdict =
  | { readonly ok: true; readonly user: McpTokenUser }
  /** The token is not valid here; `description` says why in a few words (sent in the challenge). */
  | { readonly ok: false; readonly unavailable: false; readonly description: string }
  /** The signing keys could not be fetched: nothing can be said about the token. */
  | { readonly ok: false; readonly unavailable: true; readonly description: string };

/** The issuer's key set could not be fetched (timeout, network, not a JWKS): not the token's fault. */
class KeySetUnavailable extends Error {}

/**
 * Validates a bearer JWT with `jose` (signature against the issuer's JWKS, `iss`, `aud`, `exp`
 * required, `nbf`) and maps its scopes to roles. The key set is fetched on first use and cached
 * by `jose` (re-fetched, rate-limited, when a token names an unknown key).
 */
export class McpJwtVerifier {
  private readonly keys: ReturnType<typeof createRemoteJWKSet>;

  constructor(
    private readonly options: ResolvedMcpJwtOptions,
    private readonly scopeRoles: McpScopeRoles,
  ) {
    this.keys = createRemoteJWKSet(new URL(options.jwksUri));
  }

  async verify(token: string): Promise<JwtVerdict> {
    try {
      const { payload } = await jwtVerify(token, this.keyFor, {
        issuer: this.options.issuer,
        audience: [...this.options.audience],
        algorithms: [...this.options.algorithms],
        clockTolerance: this.options.clockToleranceSeconds,
        requiredClaims: ['exp'],
      });
      const scopes = scopesOf(payload);
      const sub = typeof payload.sub === 'string' && payload.sub.length > 0 ? payload.sub : undefined;
      return { ok: true, user: { id: sub, sub, scopes, roles: this.scopeRoles.rolesOf(scopes), claims: payload } };
    } catch (error) {
      if (error instanceof KeySetUnavailable) return { ok: false, unavailable: true, description: 'The authorization server\'s signing keys could not be fetched' };
      return { ok: false, unavailable: false, description: describe(error) };
    }
  }

  /** The verification key; a key set that cannot be fetched is told apart from a token it does not cover. */
  private readonly keyFor = async (header: JWTHeaderParameters, input: FlattenedJWSInput) => {
    try {
      return await this.keys(header, input);
    } catch (error) {
      if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys || error instanceof errors.JOSENotSupported) throw error;
      throw new KeySetUnavailable(error instanceof Error ? error.message : String(error));
    }
  };
}

/** A few words on why a token was refused: which claim, or that the signature or shape is wrong. Never the token. */
function describe(error: unknown): string {
  if (error instanceof errors.JWTExpired) return 'The access token expired';
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'aud') return 'The access token is for another resource';
    if (error.claim === 'iss') return 'The access token was issued by an unexpected issuer';
    return `The access token's ${error.claim} claim is not valid`;
  }
  if (error instanceof errors.JWSSignatureVerificationFailed || error instanceof errors.JWKSNoMatchingKey) return 'The access token signature is not valid';
  if (error instanceof errors.JOSEAlgNotAllowed) return 'The access token is signed with an algorithm that is not accepted';
  return 'The access token is malformed';
}

function scopesOf(payload: JWTPayload): string[] {
  const { scope, scp } = payload as { scope?: unknown; scp?: unknown };
  if (typeof scope === 'string') return scope.split(' ').filter(Boolean);
  if (Array.isArray(scp)) return scp.filter((s): s is string => typeof s === 'string' && s.length > 0);
  if (typeof scp === 'string') return scp.split(' ').filter(Boolean);
  return [];
}
