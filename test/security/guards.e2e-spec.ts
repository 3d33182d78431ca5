/**
 * The app's own guards run per call: false -> -32001 "Access denied", Unauthorized/Forbidden ->
 * -32001, only the denied item of a batch fails. An auth guard runs before the roles check (so it
 * can establish the caller), and a cache hit still passes the guards.
 */
import {
  Injectable,
  Module,
  ForbiddenException,
  UnauthorizedException,
  UseGuards,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { JsonRpcModule, RpcCache, RpcMethod, getRpcContext } from '@nest-jsonrpc/server';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';
import { call } from './security-apps.js';

/** Turns `authorization: Bearer <user>:<role,role>` into request.user; denies a malformed token. */
@Injectable()
class BearerAuthGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest();
    const header = request.headers.authorization as string | undefined;
    if (header === undefined) return true; // anonymous: the roles check decides
    const match = /^Bearer ([a-z]+):([a-z,]*)$/.exec(header);
    if (!match) throw new UnauthorizedException('Invalid token');
    request.user = { id: match[1], roles: match[2].split(',').filter(Boolean) };
    return true;
  }
}

@Injectable()
class FalseGuard implements CanActivate {
  canActivate() {
    return false;
  }
}

@Injectable()
class ForbidOddIds implements CanActivate {
  async canActivate(context: ExecutionContext) {
    const rpc = getRpcContext(context)!;
    if (Number(rpc.id) % 2 === 1) throw new ForbiddenException();
    return true;
  }
}

@Injectable()
class Methods {
  runs = 0;
  @RpcMethod('open') open() { return 'open'; }
  @RpcMethod('never') @UseGuards(FalseGuard) never() { this.runs++; return 'never'; }
  @RpcMethod('even') @UseGuards(ForbidOddIds) even() { return 'even'; }
  @RpcMethod('me', { roles: ['reader'] }) me() { return 'reader ok'; }
  @RpcMethod('report', { roles: ['reader'] })
  @RpcCache({ ttl: 60 })
  @UseGuards(ForbidOddIds)
  report() { this.runs++; return { rows: 3 }; }
}

@Module({
  imports: [JsonRpcModule.forRoot()],
  providers: [Methods, { provide: APP_GUARD, useClass: BearerAuthGuard }],
})
class GuardsModule {}

describe('the app guards, per call', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(GuardsModule);
  });
  afterAll(() => t.close());

  const auth = (token: string) => ({ headers: { authorization: token } });

  it('a guard returning false answers -32001 "Access denied" and the handler never runs', async () => {
    const methods = t.app.get(Methods);
    methods.runs = 0;
    expect((await t.rpc(call('never'))).body).toEqual({ jsonrpc: '2.0', error: { code: -32001, message: 'Access denied' }, id: 1 });
    expect(methods.runs).toBe(0);
  });

  it('UnauthorizedException and ForbiddenException from guards are -32001', async () => {
    expect((await t.rpc(call('open'), auth('Basic nope'))).body).toEqual({ jsonrpc: '2.0', error: { code: -32001, message: 'Invalid token' }, id: 1 });
    expect((await t.rpc(call('even', undefined, 3))).body).toEqual({ jsonrpc: '2.0', error: { code: -32001, message: 'Access denied' }, id: 3 });
    expect((await t.rpc(call('even', undefined, 4))).body).toEqual({ jsonrpc: '2.0', result: 'even', id: 4 });
  });

  it('only the denied items of a batch fail', async () => {
    const res = await t.rpc([call('even', undefined, 1), call('even', undefined, 2), call('never', undefined, 4), call('open', undefined, 6)]);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      { jsonrpc: '2.0', error: { code: -32001, message: 'Access denied' }, id: 1 },
      { jsonrpc: '2.0', result: 'even', id: 2 },
      { jsonrpc: '2.0', error: { code: -32001, message: 'Access denied' }, id: 4 },
      { jsonrpc: '2.0', result: 'open', id: 6 },
    ]);
  });

  it('an auth guard runs before the roles check and establishes the caller', async () => {
    expect((await t.rpc(call('me'), auth('Bearer ann:reader'))).body).toEqual({ jsonrpc: '2.0', result: 'reader ok', id: 1 });
    expect((await t.rpc(call('me'), auth('Bearer ann:writer'))).body.error).toEqual({
      code: -32001,
      message: 'One of the following roles is required: reader',
    });
    expect((await t.rpc(call('me'))).body.error.code).toBe(-32001);
  });

  it('a cache hit still passes the guards and the roles', async () => {
    const methods = t.app.get(Methods);
    methods.runs = 0;
    expect((await t.rpc(call('report', undefined, 2), auth('Bearer ann:reader'))).body).toEqual({ jsonrpc: '2.0', result: { rows: 3 }, id: 2 });
    expect((await t.rpc(call('report', undefined, 4), auth('Bearer bob:reader'))).body).toEqual({ jsonrpc: '2.0', result: { rows: 3 }, id: 4 });
    expect(methods.runs).toBe(1);
    // The entry exists, but the guard denies odd ids and the roles check denies non-readers.
    expect((await t.rpc(call('report', undefined, 5), auth('Bearer ann:reader'))).body.error).toEqual({ code: -32001, message: 'Access denied' });
    expect((await t.rpc(call('report', undefined, 6), auth('Bearer eve:writer'))).body.error.code).toBe(-32001);
    expect((await t.rpc(call('report', undefined, 8))).body.error.code).toBe(-32001);
    expect(methods.runs).toBe(1);
  });
});
