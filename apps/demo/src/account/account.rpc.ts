import { Injectable } from '@nestjs/common';
import {
  RpcAccessDeniedException,
  RpcCache,
  RpcCacheInvalidator,
  RpcCtx,
  RpcMcp,
  RpcMethod,
  RpcParams,
  RpcRateLimit,
  type RpcContext,
} from '@nest-jsonrpc/server';
import { LoginDto, ReportDto } from './account.dto.js';
import { UserDirectory, type DemoUser } from './user-directory.js';

/** Roles, rate limits and caching, each on one method (see docs/security.md for curl). */
@Injectable()
export class AccountRpc {
  private reportRuns = 0;

  constructor(
    private readonly directory: UserDirectory,
    private readonly cache: RpcCacheInvalidator,
  ) {}

  @RpcMethod('auth.login', { description: 'Trades a username and password for a bearer token.' })
  @RpcRateLimit({ limit: 5, interval: 60, scope: 'ip' })
  login(@RpcParams() p: LoginDto) {
    const token = this.directory.login(p.username, p.password);
    if (!token) throw new RpcAccessDeniedException('Wrong username or password');
    return { token };
  }

  @RpcMethod('account.me', { roles: ['user'], description: 'Who you are (needs the "user" role).' })
  @RpcMcp({ title: 'Who am I' })
  me(@RpcCtx() ctx: RpcContext) {
    const user = ctx.user as DemoUser;
    return { id: user.id, roles: ctx.roles };
  }

  @RpcMethod('admin.stats', { roles: ['admin'], description: 'Admins only.' })
  stats() {
    return { uptimeSeconds: Math.round(process.uptime()), reportRuns: this.reportRuns };
  }

  @RpcMethod('demo.ping', { description: '3 calls per 10 seconds per user (per IP when anonymous).' })
  @RpcRateLimit({ limit: 3, interval: 10, scope: 'user' })
  ping() {
    return 'pong';
  }

  @RpcMethod('reports.monthly', { roles: ['user'], description: 'An expensive report, cached 30 s for everyone.' })
  @RpcCache({ ttl: 30, tags: ['reports'] })
  @RpcMcp({ title: 'Monthly report', format: 'markdown' })
  async monthly(@RpcParams() p: ReportDto) {
    await new Promise((resolve) => setTimeout(resolve, 300)); // the expensive part
    return { month: p.month, total: 1234.5, generatedAt: new Date().toISOString(), run: ++this.reportRuns };
  }

  @RpcMethod('reports.refresh', { roles: ['admin'], description: 'Drops the cached reports.' })
  async refresh() {
    await this.cache.purgeTags(['reports']);
    return { purged: 'reports' };
  }
}
