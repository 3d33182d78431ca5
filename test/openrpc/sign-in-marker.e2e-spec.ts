/**
 * `@RpcMethod(name, { explorer: { signIn } })`: the login method is published as `x-sign-in` in
 * the OpenRPC document (defaults filled in, the document still valid under the meta-schema), and
 * a malformed marker fails startup naming the method.
 */
import { Injectable, Module } from '@nestjs/common';
import { JsonRpcModule, RpcMethod, RpcStartupError, RpcStream, type RpcMethodOptions } from '@nest-jsonrpc/server';
import { validateOpenRpc } from '../../libs/server/src/openrpc/openrpc-validation.spec-support.js';
import { bootError } from '../support/boot-error.js';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';

const DESCRIBED = { openrpc: { enabled: true, info: { title: 'Sign-in test', version: '1' } } } as const;

@Injectable()
class LoginRpc {
  @RpcMethod('auth.login', { explorer: { signIn: true }, result: { type: 'object', properties: { token: { type: 'string' } } } })
  login() {
    return { token: 't' };
  }

  @RpcMethod('session.open', { explorer: { signIn: { tokenPath: 'data.apiKey', header: 'X-Api-Key', scheme: '' } } })
  open() {
    return { data: { apiKey: 'k' } };
  }

  @RpcMethod('plain.call')
  plain() {
    return 1;
  }
}

@Module({ imports: [JsonRpcModule.forRoot(DESCRIBED)], providers: [LoginRpc] })
class LoginModule {}

describe('the sign-in marker', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(LoginModule);
  });
  afterAll(() => t?.close());

  it('is published as x-sign-in, defaults filled in, and only on the marked methods', async () => {
    const res = await fetch(`${t.url}/rpc/openrpc.json`);
    expect(res.status).toBe(200);
    const document = await res.json();
    const byName = Object.fromEntries(document.methods.map((m: { name: string }) => [m.name, m]));
    expect(byName['auth.login']['x-sign-in']).toEqual({ tokenPath: 'token', header: 'Authorization', scheme: 'Bearer' });
    expect(byName['session.open']['x-sign-in']).toEqual({ tokenPath: 'data.apiKey', header: 'X-Api-Key', scheme: '' });
    expect(byName['plain.call']).not.toHaveProperty('x-sign-in');
    expect(validateOpenRpc(document)).toBe(true);
  });

  it('fails startup for a malformed marker, or one on a stream, naming the method', async () => {
    const bad = (explorer: unknown) => ({ explorer }) as unknown as RpcMethodOptions;
    @Injectable()
    class BadRpc {
      @RpcMethod('a', bad({ signIn: { tokenPath: 'a..b', header: 'Bad Header', scheme: 'Be arer', extra: 1 } })) a() { return 1; }
      @RpcMethod('b', bad({ signIn: 'yes' })) b() { return 1; }
      @RpcMethod('c', bad({ login: true })) c() { return 1; }
      @RpcMethod('d', { explorer: { signIn: true } })
      @RpcStream()
      async *d() { yield 1; }
    }
    @Module({ imports: [JsonRpcModule.forRoot({ stream: { enabled: true }, ...DESCRIBED })], providers: [BadRpc] })
    class BadModule {}

    const error = await bootError(BadModule);
    expect(error).toBeInstanceOf(RpcStartupError);
    expect([...(error as RpcStartupError).problems].sort()).toEqual([
      'BadRpc.a ("a"): option "explorer.signIn" has unknown key "extra"',
      'BadRpc.a ("a"): option "explorer.signIn.header" must be an HTTP header name',
      'BadRpc.a ("a"): option "explorer.signIn.scheme" must be an auth scheme such as "Bearer", or \'\' for the token alone',
      'BadRpc.a ("a"): option "explorer.signIn.tokenPath" must be a dot-separated property path such as "token" or "data.accessToken"',
      'BadRpc.b ("b"): option "explorer.signIn" must be true or { tokenPath?, header?, scheme? }',
      'BadRpc.c ("c"): option "explorer" has unknown key "login"',
      'BadRpc.d ("d"): option "explorer.signIn" needs a method that answers a result, not a stream',
    ]);
  });
});
