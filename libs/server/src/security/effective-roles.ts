import type { RolesMatch } from '../options/json-rpc-options.js';

/** Where a method's effective roles came from (reported by discovery and in startup errors). */
export type RolesSource = 'method' | 'public-method' | 'public-prefix' | 'prefix' | 'default' | 'public';

export interface EffectiveRoles {
  /** Empty when the method is public. */
  readonly roles: readonly string[];
  readonly rolesMatch: RolesMatch;
  readonly source: RolesSource;
}

export interface RolesPolicy {
  readonly rolesMatch: RolesMatch;
  readonly defaultRoles: readonly string[];
  readonly publicMethods: readonly string[];
  readonly publicPrefixes: readonly string[];
  readonly prefixRoles: Readonly<Record<string, readonly string[]>>;
}

/**
 * A method's roles, decided once at startup; the first rule that applies wins:
 * its own `roles` > listed in `publicMethods` > under a `publicPrefixes` entry > the longest
 * matching `prefixRoles` entry > `defaultRoles` > public. Pure: no Nest, no request.
 */
export function resolveEffectiveRoles(
  name: string,
  own: { roles?: readonly string[]; rolesMatch?: RolesMatch },
  policy: RolesPolicy,
): EffectiveRoles {
  const rolesMatch = own.rolesMatch ?? policy.rolesMatch;
  if (own.roles !== undefined) return freeze(own.roles, rolesMatch, 'method');
  if (policy.publicMethods.includes(name)) return freeze([], rolesMatch, 'public-method');
  if (policy.publicPrefixes.some((prefix) => name.startsWith(prefix))) return freeze([], rolesMatch, 'public-prefix');
  let longest: string | undefined;
  for (const prefix of Object.keys(policy.prefixRoles)) {
    if (name.startsWith(prefix) && (longest === undefined || prefix.length > longest.length)) longest = prefix;
  }
  if (longest !== undefined) return freeze(policy.prefixRoles[longest], rolesMatch, 'prefix');
  if (policy.defaultRoles.length) return freeze(policy.defaultRoles, rolesMatch, 'default');
  return freeze([], rolesMatch, 'public');
}

function freeze(roles: readonly string[], rolesMatch: RolesMatch, source: RolesSource): EffectiveRoles {
  return Object.freeze({ roles: Object.freeze([...roles]), rolesMatch, source });
}
