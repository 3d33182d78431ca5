/**
 * The module's default rate limit (`rateLimit: { limit, interval, scope }`)
 * applies to every method without its own `@RpcRateLimit`, counted per method exactly like its
 * own would be; a method's own limit wins; `@SkipThrottle({ rpc: true })` lifts both; bad values
 * fail startup with the other option problems.
 */
import { Injectable, Module } from '@nestjs/common';
import { SkipThrottle } from '@nestjs/throttler';
import { JsonRpcModule, RpcMethod, RpcRateLimit, type JsonRpcModuleOptions } from '@nest-jsonrpc/server';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';
import { call, limited, secondsLeftOf, startupError } from './security-apps.js';

@Injectable()
class Methods {
  @RpcMethod('plain') plain() { return 'p'; }
  @RpcMethod('other') other() { return 'o'; }
  @RpcMethod('own') @RpcRateLimit({ limit: 4, interval: 60, scope: 'global' }) own() { return 'own'; }
}

@SkipThrottle({ rpc: true })
@Injectable()
class Unthrottled {
  @RpcMethod('free') free() { return 'f'; }
}

function moduleWith(options: JsonRpcModuleOptions) {
  @Module({ imports: [JsonRpcModule.forRoot(options)], providers: [Methods, Unthrottled] })
  class DefaultLimitModule {}
  return DefaultLimitModule;
}

describe('the module default rate limit', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(moduleWith({ rateLimit: { limit: 2, interval: 30, scope: 'global' } }));
  });
  afterAll(() => t.close());

  it('limits a method without @RpcRateLimit: 2 results, then -32003 with retryAfter and Retry-After', async () => {
    const res = await t.rpc([call('plain', undefined, 1), call('plain', undefined, 2), call('plain', undefined, 3)]);
    expect(res.status).toBe(200);
    expect(res.headers.get('retry-after')).toBe('30');
    expect(res.body).toEqual([
      { jsonrpc: '2.0', result: 'p', id: 1 },
      { jsonrpc: '2.0', result: 'p', id: 2 },
      limited('plain', 30, 3),
    ]);
  });

  it('counts per method: another method has its own budget', async () => {
    const res = await t.rpc([call('other', undefined, 1), call('other', undefined, 2), call('other', undefined, 3)]);
    expect(res.body).toEqual([{ jsonrpc: '2.0', result: 'o', id: 1 }, { jsonrpc: '2.0', result: 'o', id: 2 }, limited('other', 30, 3)]);
  });

  it("a method's own @RpcRateLimit wins over the default", async () => {
    const res = await t.rpc(Array.from({ length: 5 }, (_, i) => call('own', undefined, i)));
    expect(res.body.filter((r: { result?: unknown }) => r.result === 'own')).toHaveLength(4);
    expect(res.body[4]).toEqual(limited('own', 60, 4));
  });

  it('@SkipThrottle({ rpc: true }) lifts the default too', async () => {
    const res = await t.rpc(Array.from({ length: 5 }, (_, i) => call('free', undefined, i)));
    expect(res.body.every((r: { result?: unknown }) => r.result === 'f')).toBe(true);
  });
});

describe('the module default rate limit with httpStatus.enabled', () => {
  it('answers 429, Retry-After and the exact -32003 body', async () => {
    const t = await startTestApp(moduleWith({ httpStatus: { enabled: true }, rateLimit: { limit: 1, interval: 20 } }));
    try {
      expect((await t.rpc(call('plain'))).status).toBe(200);
      const res = await t.rpc(call('plain', undefined, 7));
      expect(res.status).toBe(429);
      expect(res.body).toEqual(limited('plain', secondsLeftOf(20), 7));
      expect(res.headers.get('retry-after')).toBe(String(res.body.error.data.retryAfter));
    } finally {
      await t.close();
    }
  });
});

describe('bad rateLimit options fail startup', () => {
  it('names every problem', async () => {
    const error = await startupError(moduleWith({ rateLimit: { limit: 0, interval: -1, scope: 'world', burst: 3, onStoreError: 'maybe' } as never }));
    expect(error.message).toContain('unknown option "rateLimit.burst"');
    expect(error.message).toContain('"rateLimit.onStoreError" must be "allow" or "deny", got "maybe"');
    expect(error.message).toContain('"rateLimit.limit" must be an integer >= 1, got 0');
    expect(error.message).toContain('"rateLimit.interval" must be a number of seconds > 0');
    expect(error.message).toContain('"rateLimit.scope" must be "global", "user" or "ip", got "world"');
  });

  it('onStoreError alone sets the policy without a default limit, and is checked too', async () => {
    const error = await startupError(moduleWith({ rateLimit: { onStoreError: 'sometimes' } as never }));
    expect(error.message).toContain('"rateLimit.onStoreError" must be "allow" or "deny", got "sometimes"');
  });

  it('is an object', async () => {
    const error = await startupError(moduleWith({ rateLimit: 5 as never }));
    expect(error.message).toContain('"rateLimit" must be an object');
  });
});
