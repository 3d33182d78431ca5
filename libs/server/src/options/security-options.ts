import type { JsonRpcSecurityOptions, ResolvedJsonRpcOptions } from './json-rpc-options.js';
import { isStringList, type OptionProblems } from './option-checks.js';

export const SECURITY_KEYS = ['rolesMatch', 'rolesResolver', 'exposeRoleNames', 'defaultRoles', 'publicMethods', 'publicPrefixes', 'prefixRoles', 'userIdResolver'];

/** `o`: the `security` section, its keys already checked. */
export function resolveSecurityOptions(o: JsonRpcSecurityOptions, problems: OptionProblems): ResolvedJsonRpcOptions['security'] {
  const rolesMatch = o.rolesMatch ?? 'any';
  problems.oneOf('"security.rolesMatch"', rolesMatch, ['any', 'all']);
  problems.func('"security.rolesResolver"', o.rolesResolver);
  problems.func('"security.userIdResolver"', o.userIdResolver);
  problems.boolean('"security.exposeRoleNames"', o.exposeRoleNames);
  const list = (name: 'defaultRoles' | 'publicMethods' | 'publicPrefixes'): readonly string[] =>
    problems.stringList(`"security.${name}"`, o[name]) ? [...(o[name] ?? [])] : [];
  return {
    rolesMatch,
    rolesResolver: o.rolesResolver,
    exposeRoleNames: o.exposeRoleNames ?? true,
    defaultRoles: list('defaultRoles'),
    publicMethods: list('publicMethods'),
    publicPrefixes: list('publicPrefixes'),
    prefixRoles: resolvePrefixRoles(o.prefixRoles, problems),
    userIdResolver: o.userIdResolver,
  };
}

function resolvePrefixRoles(given: JsonRpcSecurityOptions['prefixRoles'], problems: OptionProblems): Record<string, readonly string[]> {
  const prefixRoles: Record<string, readonly string[]> = {};
  if (given === undefined) return prefixRoles;
  if (given === null || typeof given !== 'object' || Array.isArray(given)) {
    problems.push('"security.prefixRoles" must be an object of prefix -> roles');
    return prefixRoles;
  }
  for (const [prefix, roles] of Object.entries(given)) {
    if (prefix.length === 0) problems.push('"security.prefixRoles" has an empty prefix');
    else if (!isStringList(roles) || roles.length === 0) problems.push(`"security.prefixRoles['${prefix}']" must be a non-empty array of non-empty strings`);
    else prefixRoles[prefix] = [...roles];
  }
  return prefixRoles;
}
