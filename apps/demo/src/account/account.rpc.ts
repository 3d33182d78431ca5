import { Injectable } from '@nestjs/common';
import {
  RpcAccessDeniedException,
  RpcCache,
  RpcCacheInvalidator,
  RpcCtx,
  RpcErrorCode,
  RpcMcp,
  RpcMethod,
  RpcParams,
  RpcRateLimit,
  type RpcContext,
} from '@nest-jsonrpc/server';
import { LoginDto, MeResult, MonthlyReportResult, ReportDto, StatsResult, TokenResult } from './account.dto.js';
import { UserDirectory, type DemoUser } from './user-directory.js';

/** Roles, rate limits and caching, each on one method (see docs/security.md for curl). */
@Injectable()
export class AccountRpc {
  private reportRuns = 0;

  constructor(
    private readonly directory: UserDirectory,
    private readonly cache: RpcCacheInvalidator,
  ) {}

  @RpcMethod('auth.login', {
    summary: 'Trades a username and password for a bearer token',
    description: 'Demo users: alice / alice-pw (user, admin), bob / bob-pw (user). 5 attempts a minute per IP.',
    tags: ['account'],
    result: TokenResult,
    errors: [{ code: RpcErrorCode.AccessDenied, message: 'Wrong username or password' }],
    // The explorer offers "use this token" after a successful call: `Authorization: Bearer <result.token>`.
    explorer: { signIn: { tokenPath: 'token', header: 'Authorization', scheme: 'Bearer' } },
  })
  @RpcRateLimit({ limit: 5, interval: 60, scope: 'ip' })
  login(@RpcParams() p: LoginDto) {
    const token = this.directory.login(p.username, p.password);
    if (!token) throw new RpcAccessDeniedException('Wrong username or password');
    return { token };
  }

  @RpcMethod('account.me', { roles: ['user'], summary: 'Who you are', tags: ['account'], result: MeResult })
  @RpcMcp({ title: 'Who am I' })
  me(@RpcCtx() ctx: RpcContext) {
    const user = ctx.user as DemoUser;
    return { id: user.id, roles: ctx.roles };
  }

  @RpcMethod('admin.stats', { roles: ['admin'], summary: 'Server numbers (admins only)', tags: ['admin'], result: StatsResult })
  stats() {
    return { uptimeSeconds: Math.round(process.uptime()), reportRuns: this.reportRuns };
  }

  @RpcMethod('demo.ping', {
    summary: 'Answers pong, 3 times per 10 seconds',
    description: 'Rate limited per user (per IP when anonymous).',
    tags: ['account'],
    result: { type: 'string', enum: ['pong'] },
  })
  @RpcRateLimit({ limit: 3, interval: 10, scope: 'user' })
  ping() {
    return 'pong';
  }

  @RpcMethod('reports.monthly', { roles: ['user'], summary: 'An expensive report, cached 30 s for everyone', tags: ['reports'], result: MonthlyReportResult })
  @RpcCache({ ttl: 30, tags: ['reports'] })
  @RpcMcp({ title: 'Monthly report', format: 'markdown' })
  async monthly(@RpcParams() p: ReportDto) {
    await new Promise((resolve) => setTimeout(resolve, 300)); // the expensive part
    return { month: p.month, total: 1234.5, generatedAt: new Date().toISOString(), run: ++this.reportRuns };
  }

  @RpcMethod('reports.refresh', {
    roles: ['admin'],
    summary: 'Drops the cached reports',
    tags: ['reports'],
    result: { type: 'object', properties: { purged: { type: 'string' } }, required: ['purged'], additionalProperties: false },
  })
  async refresh() {
    await this.cache.purgeTags(['reports']);
    return { purged: 'reports' };
  }
}
