import { getOAuthProtectedResourceMetadataUrl } from '@modelcontextprotocol/server';
import type { ResolvedMcpAuthOptions } from '../../options/mcp-auth-options.js';

/** The well-known path of OAuth 2.0 Protected Resource Metadata (RFC 9728 §3). */
export const PROTECTED_RESOURCE_WELL_KNOWN = '/.well-known/oauth-protected-resource';

/** The metadata document (RFC 9728 §2), as served. */
export interface ProtectedResourceMetadata {
  readonly resource: string;
  readonly authorization_servers: readonly string[];
  readonly scopes_supported?: readonly string[];
  readonly bearer_methods_supported: readonly string[];
  readonly resource_name?: string;
  readonly resource_documentation?: string;
}

/**
 * The document for `auth`. Tokens are accepted in the `Authorization` header only: MCP forbids
 * them in the query string, and a form body is not how MCP requests travel.
 */
export function protectedResourceMetadata(auth: ResolvedMcpAuthOptions, scopesSupported: readonly string[]): ProtectedResourceMetadata {
  return {
    resource: auth.resource,
    authorization_servers: auth.authorizationServers,
    ...(scopesSupported.length > 0 && { scopes_supported: scopesSupported }),
    bearer_methods_supported: ['header'],
    ...(auth.resourceName !== undefined && { resource_name: auth.resourceName }),
    ...(auth.documentation !== undefined && { resource_documentation: auth.documentation }),
  };
}

/**
 * Where the document is served on this server (RFC 9728 §3.1): the well-known path with the
 * resource's path appended (`/.well-known/oauth-protected-resource/mcp` for `https://host/mcp`),
 * which is the form clients try first and challenges name, and the root form, which clients fall
 * back to. A resource at the root has only the root form.
 */
export function metadataPaths(resource: string): readonly string[] {
  const suffixed = new URL(metadataUrl(resource)).pathname;
  return suffixed === PROTECTED_RESOURCE_WELL_KNOWN ? [suffixed] : [suffixed, PROTECTED_RESOURCE_WELL_KNOWN];
}

/** The URL a challenge names in `resource_metadata`: the path-suffixed form on the resource's origin (the SDK's rule). */
export function metadataUrl(resource: string): string {
  const url = new URL(getOAuthProtectedResourceMetadataUrl(new URL(resource)));
  url.search = '';
  return url.href;
}
