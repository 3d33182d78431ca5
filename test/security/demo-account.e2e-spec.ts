/**
 * The demo's account walkthrough (docs/security.md) as a newcomer would run it with curl:
 * login, a protected method, a rate-limited one, a cached one and its refresh.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppModule } from '../../apps/demo/src/app.module.js';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';
import { call } from './security-apps.js';

describe('demo: roles, limits and cache with a header-based login', () => {
  let t: TestApp;
  let bob: string;
  let alice: string;
  let wrongPassword: unknown;
  // auth.login allows 5 attempts a minute per IP, and every test here comes from 127.0.0.1: all
  // logins but the brute-force test's happen here, so the tests pass in any order (3 of 5 used).
  // The demo keeps durable streams in ./data (SQLite), one process per file: started from the
  // repository, it would be refused while this suite runs on the other platform in parallel, or
  // while `npm start` runs there. Its own directory, as the other demo suites do.
  const dataDir = mkdtempSync(join(tmpdir(), 'nest-jsonrpc-demo-'));
  beforeAll(async () => {
    const cwd = process.cwd();
    try {
      process.chdir(dataDir);
      t = await startTestApp(AppModule);
    } finally {
      process.chdir(cwd);
    }
    bob = (await login('bob', 'bob-pw')).result.token;
    alice = (await login('alice', 'alice-pw')).result.token;
    wrongPassword = await login('bob', 'nope');
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const login = async (username: string, password: string) => (await t.rpc(call('auth.login', { username, password }))).body;
  const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });

  it('login gives a token; a wrong password or a bad token is -32001', async () => {
    expect(wrongPassword).toEqual({ jsonrpc: '2.0', error: { code: -32001, message: 'Wrong username or password' }, id: 1 });
    expect(bob).toMatch(/^[0-9a-f-]{36}$/);
    expect((await t.rpc(call('account.me'), bearer('forged'))).body.error).toEqual({ code: -32001, message: 'Invalid or expired token; call auth.login' });
  });

  it('protected methods need the right role', async () => {
    expect((await t.rpc(call('account.me'))).body.error).toEqual({ code: -32001, message: 'One of the following roles is required: user' });
    expect((await t.rpc(call('account.me'), bearer(bob))).body.result).toEqual({ id: 'bob', roles: ['user'] });
    expect((await t.rpc(call('admin.stats'), bearer(bob))).body.error).toEqual({ code: -32001, message: 'One of the following roles is required: admin' });
    expect((await t.rpc(call('admin.stats'), bearer(alice))).body.result).toHaveProperty('uptimeSeconds');
  });

  it('auth.login itself is limited to 5 attempts a minute per IP (brute force)', async () => {
    const attempts = await t.rpc([1, 2, 3, 4].map((id) => call('auth.login', { username: 'bob', password: `guess${id}` }, id)));
    expect(attempts.body.map((r: any) => r.error.code)).toEqual([-32001, -32001, -32003, -32003]);
  });

  it('demo.ping allows 3 calls per 10 s per user', async () => {
    const res = await t.rpc([1, 2, 3, 4].map((id) => call('demo.ping', undefined, id)), bearer(bob));
    expect(res.body.map((r: any) => r.result ?? r.error.code)).toEqual(['pong', 'pong', 'pong', -32003]);
    expect(res.headers.get('retry-after')).toBe('10');
  });

  it('reports.monthly is cached until an admin refreshes it', async () => {
    const first = (await t.rpc(call('reports.monthly', { month: '2024-01' }), bearer(bob))).body.result;
    const again = (await t.rpc(call('reports.monthly', { month: '2024-01' }), bearer(alice))).body.result;
    expect(again).toEqual(first);
    expect((await t.rpc(call('reports.refresh'), bearer(bob))).body.error.code).toBe(-32001);
    expect((await t.rpc(call('reports.refresh'), bearer(alice))).body.result).toEqual({ purged: 'reports' });
    const fresh = (await t.rpc(call('reports.monthly', { month: '2024-01' }), bearer(bob))).body.result;
    expect(fresh.run).toBe(first.run + 1);
  });
});
