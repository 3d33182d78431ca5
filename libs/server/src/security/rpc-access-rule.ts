import { RpcAccessDeniedException } from '../errors/rpc-exceptions.js';
import type { RolesMatch } from '../options/json-rpc-options.js';

/**
 * The roles check of one protected method, built at startup: the roles, how they match and the
 * denial message are fixed, so a call costs one scan of the caller's (few) roles.
 */
export class RpcAccessRule {
  private readonly deniedMessage: string;

  constructor(
    readonly roles: readonly string[],
    readonly rolesMatch: RolesMatch,
    exposeRoleNames: boolean,
  ) {
    this.deniedMessage = !exposeRoleNames
      ? 'Access denied'
      : rolesMatch === 'all'
        ? `All of the following roles are required: ${roles.join(', ')}`
        : `One of the following roles is required: ${roles.join(', ')}`;
  }

  allows(have: readonly string[]): boolean {
    const need = this.roles;
    if (this.rolesMatch === 'all') {
      for (let i = 0; i < need.length; i++) if (!have.includes(need[i])) return false;
      return true;
    }
    for (let i = 0; i < need.length; i++) if (have.includes(need[i])) return true;
    return false;
  }

  /** The denial message when the caller's roles fall short; undefined when they suffice. */
  denial(have: readonly string[]): string | undefined {
    return this.allows(have) ? undefined : this.deniedMessage;
  }

  /** Throws -32001 unless the caller's roles satisfy the rule. Anonymous callers have no roles. */
  check(have: readonly string[]): void {
    if (!this.allows(have)) throw new RpcAccessDeniedException(this.deniedMessage);
  }
}
