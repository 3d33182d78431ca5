import type { RpcAccessRule } from '../../security/rpc-access-rule.js';

/**
 * `mcp.auth.scopeRoles`, read both ways. A token's scopes grant roles (a scope not listed grants
 * the role of its own name), and a tool's roles are asked for as the scopes that grant them (a role
 * no scope grants is asked for by its own name).
 */
export class McpScopeRoles {
  private readonly scopesByRole = new Map<string, string[]>();

  constructor(private readonly rolesByScope: Readonly<Record<string, readonly string[]>>) {
    for (const [scope, roles] of Object.entries(rolesByScope)) {
      for (const role of roles) {
        const scopes = this.scopesByRole.get(role) ?? [];
        if (!scopes.includes(scope)) scopes.push(scope);
        this.scopesByRole.set(role, scopes);
      }
    }
  }

  /** The roles a token with `scopes` holds, in first-seen order, without duplicates. */
  rolesOf(scopes: readonly string[]): string[] {
    const roles: string[] = [];
    for (const scope of scopes) {
      for (const role of Object.hasOwn(this.rolesByScope, scope) ? this.rolesByScope[scope]! : [scope]) {
        if (!roles.includes(role)) roles.push(role);
      }
    }
    return roles;
  }

  /**
   * The scopes a caller must hold to pass `rule`: every role's scope when all roles are required;
   * the first role's when any one suffices (asking for all alternatives would ask for more than
   * the call needs). Empty for a tool without roles.
   */
  scopesFor(rule: RpcAccessRule | undefined): string[] {
    if (!rule || rule.roles.length === 0) return [];
    const roles = rule.rolesMatch === 'all' ? rule.roles : rule.roles.slice(0, 1);
    const scopes: string[] = [];
    for (const role of roles) {
      for (const scope of this.scopesByRole.get(role) ?? [role]) if (!scopes.includes(scope)) scopes.push(scope);
    }
    return scopes;
  }
}
