import type { JsonRpcSecurityOptions, ResolvedJsonRpcOptions } from './json-rpc-options.js';
import { check, isStringList, type OptionProblems } from './option-checks.js';
import { OptionSection } from './option-section.js';

/** The `security` section. */
export const securitySection = new OptionSection<JsonRpcSecurityOptions, ResolvedJsonRpcOptions['security']>('security', {
  rolesMatch: { default: 'any', check: check.oneOf(['any', 'all']), doc: "default for methods' `rolesMatch`" },
  rolesResolver: { check: check.func, doc: '`(request) => string[]`, who is calling, as roles (default `request.user.roles`)' },
  exposeRoleNames: { default: true, check: check.boolean, doc: '`false`: every denial says just `Access denied`' },
  defaultRoles: { resolve: (v, label, problems) => roleList(v, label, problems), doc: 'roles of every method that declares none ([resolution order](docs/security.md#roles))' },
  publicMethods: { resolve: (v, label, problems) => roleList(v, label, problems), doc: 'methods open to everyone even when `defaultRoles` is set' },
  publicPrefixes: { resolve: (v, label, problems) => roleList(v, label, problems), doc: "method-name prefixes open to everyone even when `defaultRoles` is set (`'health.'`)" },
  prefixRoles: {
    resolve: (v, _label, problems) => resolvePrefixRoles(v as JsonRpcSecurityOptions['prefixRoles'], problems),
    doc: "roles per method-name prefix (`{ 'admin.': ['admin'] }`); the longest matching prefix wins",
  },
  userIdResolver: { check: check.func, shown: '`user.id`, `sub`, `username`', doc: "who the user is, for `'user'` scopes and durable stream ownership" },
});

function roleList(value: unknown, label: string, problems: OptionProblems): readonly string[] {
  return problems.stringList(label, value) && value !== undefined ? [...(value as readonly string[])] : [];
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
