import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';

export interface DemoUser {
  id: string;
  roles: string[];
}

/**
 * The demo's whole identity system: two users with plain-text passwords and an in-memory token
 * table. Good enough to try roles, per-user limits and per-user caches with curl; never do this
 * in a real app (use Passport/JWT, which set `request.user` just the same).
 */
@Injectable()
export class UserDirectory {
  private readonly users = new Map<string, { password: string; roles: string[] }>([
    ['alice', { password: 'alice-pw', roles: ['user', 'admin'] }],
    ['bob', { password: 'bob-pw', roles: ['user'] }],
  ]);
  private readonly tokens = new Map<string, DemoUser>();

  login(username: string, password: string): string | undefined {
    const user = this.users.get(username);
    if (!user || user.password !== password) return undefined;
    const token = randomUUID();
    this.tokens.set(token, { id: username, roles: [...user.roles] });
    return token;
  }

  byToken(token: string): DemoUser | undefined {
    return this.tokens.get(token);
  }
}
