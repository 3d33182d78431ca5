import { RpcErrorCode, type RpcErrorObject } from '@nest-jsonrpc/protocol';

/** Why a request is refused before (or instead of) its answer (RFC 6750 §3.1 error codes, or none). */
export type BearerRefusalReason =
  /** No credentials, and the call needs identity: 401 without an error code (RFC 6750 §3.1). */
  | 'unauthenticated'
  /** A bearer token was sent but is not valid here (signature, issuer, audience, expiry…): 401. */
  | 'invalid_token'
  /** Authenticated, but the token lacks what the call needs: 403 (step-up). */
  | 'insufficient_scope'
  /** Malformed: e.g. a token in the query string, which MCP forbids: 400. */
  | 'invalid_request';

/** An HTTP refusal with its `WWW-Authenticate` challenge and the JSON-RPC error the body carries. */
export interface BearerChallenge {
  readonly status: 400 | 401 | 403;
  readonly wwwAuthenticate: string;
  readonly error: RpcErrorObject;
}

const STATUS: Readonly<Record<BearerRefusalReason, BearerChallenge['status']>> = {
  unauthenticated: 401,
  invalid_token: 401,
  insufficient_scope: 403,
  invalid_request: 400,
};

const MESSAGE: Readonly<Record<BearerRefusalReason, string>> = {
  unauthenticated: 'Authentication required',
  invalid_token: 'Invalid access token',
  insufficient_scope: 'Insufficient scope',
  invalid_request: 'Invalid request',
};

/**
 * The challenge of a refusal (RFC 6750 §3, RFC 9728 §5.1): `resource_metadata` always (MCP
 * clients start discovery from it), `scope` when the call needs some (the client asks the
 * authorization server for exactly those), `error`/`error_description` except for a request that
 * simply sent no credentials.
 */
export function bearerChallenge(reason: BearerRefusalReason, metadataUrl: string, scopes: readonly string[], description?: string): BearerChallenge {
  const params: string[] = [];
  if (reason !== 'unauthenticated') params.push(`error="${reason}"`);
  if (description !== undefined) params.push(`error_description="${quotable(description)}"`);
  params.push(`resource_metadata="${quotable(metadataUrl)}"`);
  if (scopes.length) params.push(`scope="${quotable(scopes.join(' '))}"`);
  const message = description === undefined ? MESSAGE[reason] : `${MESSAGE[reason]}: ${description}`;
  const data = scopes.length ? { scope: scopes.join(' ') } : undefined;
  return {
    status: STATUS[reason],
    wwwAuthenticate: `Bearer ${params.join(', ')}`,
    error: { code: reason === 'invalid_request' ? RpcErrorCode.InvalidRequest : RpcErrorCode.AccessDenied, message, ...(data && { data }) },
  };
}

/** Text safe inside a quoted-string (RFC 9110 §5.6.4) and RFC 6750's error_description alphabet. */
function quotable(text: string): string {
  return text.replace(/[^\x20-\x21\x23-\x5B\x5D-\x7E]/g, '?');
}
