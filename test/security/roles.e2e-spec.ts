/**
 * Roles: resolution order (own > publicMethods > publicPrefixes > longest prefixRoles >
 * defaultRoles > public), messages for any/all, exposeRoleNames, anonymous callers, batches, and
 * the check running before rate limits, the cache and params validation.
 */
import { Injectable, Module } from '@nestjs/common';
import { IsInt } from 'class-validator';
import { JsonRpcModule, JsonRpcServer, RpcCache, RpcMethod, RpcParams, RpcRateLimit, RpcStartupError } from '@nest-jsonrpc/server';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';
import { as, call, headerIdentity, startupError } from './security-apps.js';

class CountDto {
  @IsInt()
  count!: number;
}

@Injectable()
class Methods {
  handlerRuns = 0;
  @RpcMethod('own.any', { roles: ['admin', 'ops'] }) ownAny() { return 'own.any'; }
  @RpcMethod('own.all', { roles: ['admin', 'ops'], rolesMatch: 'all' }) ownAll() { return 'own.all'; }
  @RpcMethod('admin.public', { roles: [] }) ownEmpty() { return 'open by own empty roles'; }
  @RpcMethod('health.check') health() { return 'health'; }
  @RpcMethod('listed.open') listed() { return 'listed'; }
  @RpcMethod('admin.users.list') adminUsers() { return 'admin.users.list'; }
  @RpcMethod('admin.settings') adminSettings() { return 'admin.settings'; }
  @RpcMethod('plain.thing') plain() { return 'plain'; }
  @RpcMethod('guarded.dto', { roles: ['admin'] }) dto(@RpcParams() p: CountDto) { this.handlerRuns++; return p.count; }
  @RpcMethod('guarded.limited', { roles: ['admin'] })
  @RpcRateLimit({ limit: 1, interval: 60, scope: 'global' })
  limited() { this.handlerRuns++; return 'limited'; }
  @RpcMethod('guarded.cached', { roles: ['admin'] })
  @RpcCache({ ttl: 60 })
  cached() { this.handlerRuns++; return { secret: 42 }; }
}

@Module({
  imports: [
    JsonRpcModule.forRoot({
      security: {
        defaultRoles: ['member'],
        publicMethods: ['listed.open'],
        publicPrefixes: ['health.'],
        prefixRoles: { 'admin.': ['admin'], 'admin.users.': ['hr'] },
      },
    }),
  ],
  providers: [Methods],
})
class RolesModule {}

describe('roles', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(RolesModule, headerIdentity);
  });
  afterAll(() => t.close());

  const denied = (message: string, id: number | string = 1) => ({ jsonrpc: '2.0', error: { code: -32001, message }, id });
  const ok = (result: unknown, id: number | string = 1) => ({ jsonrpc: '2.0', result, id });

  it('resolves every method once at startup, first matching rule wins', () => {
    const registry = t.app.get(JsonRpcServer).registry;
    const summary = Object.fromEntries([...registry.all()].map((d) => [d.name, [d.rolesSource, d.roles.join('+')]]));
    expect(summary).toEqual({
      'own.any': ['method', 'admin+ops'],
      'own.all': ['method', 'admin+ops'],
      'admin.public': ['method', ''],
      'health.check': ['public-prefix', ''],
      'listed.open': ['public-method', ''],
      'admin.users.list': ['prefix', 'hr'],
      'admin.settings': ['prefix', 'admin'],
      'plain.thing': ['default', 'member'],
      'guarded.dto': ['method', 'admin'],
      'guarded.limited': ['method', 'admin'],
      'guarded.cached': ['method', 'admin'],
    });
  });

  it('any: one of the roles is enough; the message lists them', async () => {
    expect((await t.rpc(call('own.any'), as('u', ['ops']))).body).toEqual(ok('own.any'));
    expect((await t.rpc(call('own.any'), as('u', ['member']))).body).toEqual(denied('One of the following roles is required: admin, ops'));
  });

  it('all: every role is needed; the message says so', async () => {
    expect((await t.rpc(call('own.all'), as('u', ['admin', 'ops']))).body).toEqual(ok('own.all'));
    expect((await t.rpc(call('own.all'), as('u', ['admin']))).body).toEqual(denied('All of the following roles are required: admin, ops'));
  });

  it('anonymous callers of a protected method get -32001; public ones pass', async () => {
    expect((await t.rpc(call('own.any'))).body).toEqual(denied('One of the following roles is required: admin, ops'));
    expect((await t.rpc(call('plain.thing'))).body).toEqual(denied('One of the following roles is required: member'));
    expect((await t.rpc(call('health.check'))).body).toEqual(ok('health'));
    expect((await t.rpc(call('listed.open'))).body).toEqual(ok('listed'));
    expect((await t.rpc(call('admin.public'))).body).toEqual(ok('open by own empty roles'));
  });

  it('the longest matching prefix wins over a shorter one and over defaultRoles', async () => {
    expect((await t.rpc(call('admin.users.list'), as('u', ['admin']))).body).toEqual(denied('One of the following roles is required: hr'));
    expect((await t.rpc(call('admin.users.list'), as('u', ['hr']))).body).toEqual(ok('admin.users.list'));
    expect((await t.rpc(call('admin.settings'), as('u', ['member']))).body).toEqual(denied('One of the following roles is required: admin'));
    expect((await t.rpc(call('plain.thing'), as('u', ['member']))).body).toEqual(ok('plain'));
  });

  it('a batch answers allowed items and denies only the others, in order', async () => {
    const res = await t.rpc(
      [call('own.any', undefined, 'a'), call('health.check', undefined, 'b'), call('admin.settings', undefined, 'c'), call('own.all', undefined, 'd')],
      as('u', ['ops']),
    );
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      ok('own.any', 'a'),
      ok('health', 'b'),
      denied('One of the following roles is required: admin', 'c'),
      denied('All of the following roles are required: admin, ops', 'd'),
    ]);
  });

  it('runs before params validation, the rate limit and the cache', async () => {
    const methods = t.app.get(Methods);
    methods.handlerRuns = 0;
    // Invalid params from an anonymous caller: the caller learns nothing about the params.
    expect((await t.rpc(call('guarded.dto', { count: 'x' }))).body).toEqual(denied('One of the following roles is required: admin'));
    // Denied calls do not use up the limit of 1...
    for (let i = 0; i < 3; i++) expect((await t.rpc(call('guarded.limited'))).body.error.code).toBe(-32001);
    expect((await t.rpc(call('guarded.limited'), as('root', ['admin']))).body).toEqual(ok('limited'));
    // ...and a cached result is never served to a caller without the role.
    expect((await t.rpc(call('guarded.cached'), as('root', ['admin']))).body).toEqual(ok({ secret: 42 }));
    expect((await t.rpc(call('guarded.cached'))).body).toEqual(denied('One of the following roles is required: admin'));
    expect((await t.rpc(call('guarded.cached'), as('u', ['member']))).body).toEqual(denied('One of the following roles is required: admin'));
    expect(methods.handlerRuns).toBe(2);
    // With the role, params validation does run.
    const invalid = await t.rpc(call('guarded.dto', { count: 'x' }), as('root', ['admin']));
    expect(invalid.body.error.code).toBe(-32602);
  });

  it('with httpStatus.enabled a denial is 400', async () => {
    @Module({ imports: [JsonRpcModule.forRoot({ httpStatus: { enabled: true } })], providers: [Methods] })
    class StatusModule {}
    const s = await startTestApp(StatusModule, headerIdentity);
    try {
      const res = await s.rpc(call('own.any'));
      expect(res.status).toBe(400);
      expect(res.body).toEqual(denied('One of the following roles is required: admin, ops'));
    } finally {
      await s.close();
    }
  });
});

describe('roles: exposeRoleNames false and rolesResolver', () => {
  @Injectable()
  class Hidden {
    @RpcMethod('secret.read', { roles: ['admin'] }) read() { return 'secret'; }
    @RpcMethod('secret.all', { roles: ['a', 'b'], rolesMatch: 'all' }) all() { return 'all'; }
  }
  @Module({
    imports: [
      JsonRpcModule.forRoot({
        security: {
          exposeRoleNames: false,
          rolesResolver: (request) => String(request.headers['x-api-roles'] ?? '').split(',').filter(Boolean),
        },
      }),
    ],
    providers: [Hidden],
  })
  class HiddenModule {}

  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(HiddenModule);
  });
  afterAll(() => t.close());

  it('answers a bare "Access denied" without naming roles', async () => {
    expect((await t.rpc(call('secret.read'))).body).toEqual({ jsonrpc: '2.0', error: { code: -32001, message: 'Access denied' }, id: 1 });
    expect((await t.rpc(call('secret.all'), { headers: { 'x-api-roles': 'a' } })).body).toEqual({
      jsonrpc: '2.0',
      error: { code: -32001, message: 'Access denied' },
      id: 1,
    });
  });

  it('takes the caller roles from rolesResolver', async () => {
    expect((await t.rpc(call('secret.read'), { headers: { 'x-api-roles': 'admin' } })).body).toEqual({ jsonrpc: '2.0', result: 'secret', id: 1 });
    expect((await t.rpc(call('secret.all'), { headers: { 'x-api-roles': 'b,a' } })).body).toEqual({ jsonrpc: '2.0', result: 'all', id: 1 });
  });

  it('a forged role in the params or a non-array roles value does not help', async () => {
    const res = await t.rpc(call('secret.read', { roles: ['admin'] }), { headers: { 'x-api-roles': '' } });
    expect(res.body.error).toEqual({ code: -32001, message: 'Access denied' });
  });
});

describe('roles: bad configuration fails at startup', () => {
  it('rejects bad security options and bad method roles, naming each', async () => {
    @Injectable()
    class Bad {
      @RpcMethod('bad.roles', { roles: [''] }) a() { return 1; }
    }
    @Module({ imports: [JsonRpcModule.forRoot({ security: { prefixRoles: { 'x.': [] } } as never })], providers: [Bad] })
    class BadOptions {}
    expect((await startupError(BadOptions)).message).toContain(`"security.prefixRoles['x.']" must be a non-empty array of non-empty strings`);
    @Module({ imports: [JsonRpcModule.forRoot()], providers: [Bad] })
    class BadRoles {}
    const error = await startupError(BadRoles);
    expect(error).toBeInstanceOf(RpcStartupError);
    expect(error.message).toContain('Bad.a ("bad.roles"): option "roles" must be an array of non-empty strings');
  });
});
