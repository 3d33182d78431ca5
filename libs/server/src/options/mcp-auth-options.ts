import { check, type OptionCheck, type OptionProblems } from './option-checks.js';
import { OptionSection, type OptionRow } from './option-section.js';

/**
 * `mcp.auth`: the MCP endpoint as an OAuth 2.1 resource server (MCP authorization, RFC 9728).
 * The module publishes the Protected Resource Metadata and answers calls that need identity with
 * 401/403 challenges; checking tokens stays the app's (its guards, Passport) unless `jwt` is set.
 */
export interface JsonRpcMcpAuthOptions {
  /** This server's canonical URI as clients name it (the `resource` of RFC 8707), e.g. `https://api.example.com/mcp`. */
  resource: string;
  /** Issuer URLs of the authorization servers that issue tokens for `resource` (at least one). */
  authorizationServers: readonly string[];
  /** Scopes published in the metadata. Default: every scope a tool needs (from its roles, see `scopeRoles`). */
  scopesSupported?: readonly string[];
  /** `resource_name` of the metadata: a human-readable name. */
  resourceName?: string;
  /** `resource_documentation` of the metadata: a URL of human-readable documentation. */
  documentation?: string;
  /**
   * Which roles a token scope grants: `{ 'reports:read': 'reader' }`. A scope not listed is a role
   * of its own name (so without this option every scope is a role). Read both ways: token scopes
   * become `request.user.roles` (built-in verifier), and a tool's roles become the `scope` of its
   * challenges.
   */
  scopeRoles?: Readonly<Record<string, string | readonly string[]>>;
  /**
   * The built-in bearer-token verifier (JWT on `jose`), on the MCP routes and on the durable routes
   * (a durable tool's `sse_url` reads with the token that started it). Off: the app authenticates
   * the request itself.
   */
  jwt?: JsonRpcMcpJwtOptions;
}

export interface JsonRpcMcpJwtOptions {
  /** The `iss` a token must carry. Default: the authorization server, when `authorizationServers` names one. */
  issuer?: string;
  /** The `aud` a token must carry (one of them). Default: `resource` — a token for another resource is refused. */
  audience?: string | readonly string[];
  /** Where the issuer's signing keys are (a JWKS URL); fetched on first use and cached by `jose`. */
  jwksUri: string;
  /** Accepted signature algorithms. Default: the asymmetric algorithms `jose` supports. */
  algorithms?: readonly string[];
  /** Seconds of clock skew tolerated on `exp`/`nbf`. Default 5. */
  clockToleranceSeconds?: number;
}

export interface ResolvedMcpJwtOptions {
  readonly issuer: string;
  readonly audience: readonly string[];
  readonly jwksUri: string;
  readonly algorithms: readonly string[];
  readonly clockToleranceSeconds: number;
}

export interface ResolvedMcpAuthOptions {
  readonly resource: string;
  readonly authorizationServers: readonly string[];
  /** Undefined: derived from the tools' roles when the catalog is built. */
  readonly scopesSupported: readonly string[] | undefined;
  readonly resourceName: string | undefined;
  readonly documentation: string | undefined;
  /** Scope → the roles it grants (a scope absent here grants the role of its own name). */
  readonly scopeRoles: Readonly<Record<string, readonly string[]>>;
  readonly jwt: ResolvedMcpJwtOptions | undefined;
}

/** Asymmetric JWS algorithms: a resource server verifies with public keys only, never a shared secret. */
export const DEFAULT_JWT_ALGORITHMS: readonly string[] = Object.freeze(['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA']);

const unknownKey = (path: string) => `Unknown option "${path}"`;
const httpUrl =
  (message: string): OptionCheck =>
  (problems, label, value) => {
    if (!isHttpUrl(value)) problems.push(`${label} ${message}`);
  };

/** `mcp.auth.jwt`; `issuer` and `audience` get their defaults from `mcp.auth` (see `resolveJwt`). */
const jwtSection = new OptionSection<JsonRpcMcpJwtOptions, Omit<ResolvedMcpJwtOptions, 'issuer' | 'audience'> & Pick<JsonRpcMcpJwtOptions, 'issuer' | 'audience'>>(
  'mcp.auth.jwt',
  {
    issuer: { doc: 'the `iss` a token must carry; default: the authorization server, when `authorizationServers` names one' },
    audience: { doc: 'the `aud` a token must carry (one of them); default: `resource`' },
    jwksUri: { required: true, check: httpUrl("must be an absolute http(s) URL (the issuer's JWKS)"), doc: "where the issuer's signing keys are (a JWKS URL)" },
    algorithms: {
      default: DEFAULT_JWT_ALGORITHMS,
      check: (problems, label, algorithms) => {
        if (!problems.stringList(label, algorithms, true)) return;
        const symmetric = (algorithms as readonly string[]).filter((a) => /^HS/i.test(a) || a === 'none');
        if (symmetric.length) problems.push(`${label} takes asymmetric algorithms only (a JWKS holds public keys); got ${symmetric.join(', ')}`);
      },
      shown: 'RS/PS/ES 256–512, EdDSA',
      doc: 'accepted signature algorithms: asymmetric only (a JWKS holds public keys; `HS*` and `none` are refused at startup)',
    },
    clockToleranceSeconds: { default: 5, check: check.integer(0, 300), doc: 'seconds of clock skew tolerated on `exp`/`nbf`' },
  },
  unknownKey,
);

/** `mcp.auth`. */
const authSection = new OptionSection<JsonRpcMcpAuthOptions, Omit<ResolvedMcpAuthOptions, 'jwt'> & { jwt: undefined }>(
  'mcp.auth',
  {
    resource: {
      required: true,
      check: (problems, label, resource) => {
        if (!isHttpUrl(resource) || new URL(resource).hash !== '') {
          problems.push(`${label} must be an absolute http(s) URL without a fragment, e.g. "https://api.example.com/mcp"`);
        }
      },
      doc: "this server's canonical URI as clients name it (the `resource` of RFC 8707): the metadata's `resource`, the built-in verifier's default audience",
    },
    authorizationServers: {
      resolve: (servers, label, problems) => {
        if (problems.stringList(label, servers ?? null, true) && !(servers as readonly string[]).every(isHttpUrl)) {
          problems.push(`${label} must list absolute http(s) URLs (the issuers)`);
        }
        return Array.isArray(servers) ? [...(servers as readonly string[])] : [];
      },
      shown: 'required',
      doc: 'issuer URLs of the authorization servers that issue tokens for `resource` (at least one)',
    },
    scopesSupported: { check: check.stringList, doc: "scopes published in the metadata; default: every scope a tool needs (from its roles)" },
    resourceName: { check: check.string, doc: '`resource_name` of the metadata' },
    documentation: { check: httpUrl('must be an absolute http(s) URL'), doc: '`resource_documentation` of the metadata' },
    scopeRoles: { resolve: (given, _label, problems) => resolveScopeRoles(given as JsonRpcMcpAuthOptions['scopeRoles'], problems), doc: '`{ scope: role | roles }`: which roles a token scope grants; a scope not listed is a role of its own name' },
    // Read after the others, by resolveMcpAuthOptions: its defaults come from them.
    jwt: { resolve: () => undefined, doc: 'the built-in bearer-token verifier (JWT on `jose`)' },
  },
  unknownKey,
);

/** The rows of docs/mcp.md's `mcp.auth` options table. */
export function mcpAuthOptionRows(): OptionRow[] {
  return [...authSection.rows().filter((row) => row.option !== 'mcp.auth.jwt'), ...jwtSection.rows()];
}

/** `auth` of the `mcp` section, or undefined when absent. Problems are collected, not thrown. */
export function resolveMcpAuthOptions(auth: JsonRpcMcpAuthOptions | undefined, problems: OptionProblems): ResolvedMcpAuthOptions | undefined {
  if (auth === undefined || !authSection.checkKeys(auth, problems)) return undefined;
  return { ...authSection.resolve(auth, problems), jwt: resolveJwt(auth.jwt, auth, problems) };
}

function resolveScopeRoles(given: JsonRpcMcpAuthOptions['scopeRoles'], problems: OptionProblems): Record<string, readonly string[]> {
  const resolved: Record<string, readonly string[]> = {};
  if (given === undefined) return resolved;
  if (given === null || typeof given !== 'object' || Array.isArray(given)) {
    problems.push('"mcp.auth.scopeRoles" must be an object: { scope: role or roles }');
    return resolved;
  }
  for (const [scope, roles] of Object.entries(given)) {
    const list = typeof roles === 'string' ? [roles] : roles;
    if (!problems.stringList(`"mcp.auth.scopeRoles.${scope}"`, list, true)) continue;
    resolved[scope] = [...list];
  }
  return resolved;
}

function resolveJwt(jwt: JsonRpcMcpJwtOptions | undefined, auth: JsonRpcMcpAuthOptions, problems: OptionProblems): ResolvedMcpJwtOptions | undefined {
  if (jwt === undefined || !jwtSection.checkKeys(jwt, problems)) return undefined;
  const servers = Array.isArray(auth.authorizationServers) ? auth.authorizationServers : [];
  const issuer = jwt.issuer ?? (servers.length === 1 ? servers[0] : undefined);
  if (typeof issuer !== 'string' || issuer.length === 0) {
    problems.push('"mcp.auth.jwt.issuer" is required when "mcp.auth.authorizationServers" does not name exactly one issuer');
  }
  const audience = jwt.audience === undefined ? [auth.resource] : typeof jwt.audience === 'string' ? [jwt.audience] : jwt.audience;
  problems.stringList('"mcp.auth.jwt.audience"', audience, true);
  const resolved = jwtSection.resolve(jwt, problems);
  return { ...resolved, issuer: issuer ?? '', audience: [...(Array.isArray(audience) ? audience : [])] };
}

function isHttpUrl(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}
