import type { Logger } from '@nestjs/common';
import type { RpcContext } from '../context/rpc-context.js';
import { LocalCacheGenerations } from './cache-generations.js';
import { MemoryResultStore, type RpcResultStore } from './result-stores.js';
import { RpcMethodCache, RpcResultCache } from './rpc-result-cache.js';
import { RpcSerializedResult } from './serialized-result.js';

const ctx = (params: unknown) => ({ method: 'm', params, request: { ip: '1.2.3.4' } }) as unknown as RpcContext;

class Warnings {
  readonly lines: string[] = [];
  warn = (line: string) => this.lines.push(line);
  log = (line: string) => this.lines.push(line);
  asLogger(): Logger {
    return this as unknown as Logger;
  }
}

function cacheOver(store: RpcResultStore, warnings = new Warnings()) {
  const shared = new RpcResultCache(store, new LocalCacheGenerations(), 'p:', 'test');
  return { cache: new RpcMethodCache('m', { ttl: 60 }, shared, undefined, warnings.asLogger()), shared, warnings };
}

describe('RpcMethodCache.serve', () => {
  it('a miss runs the call and stores its JSON; the next call with the same params (any key order) is a synchronous hit', () => {
    const { cache } = cacheOver(new MemoryResultStore(10));
    let runs = 0;
    const run = () => ({ n: ++runs });
    const first = cache.serve(ctx({ a: 1, b: 2 }), run);
    expect(first).toEqual(new RpcSerializedResult('{"n":1}'));
    const second = cache.serve(ctx({ b: 2, a: 1 }), run);
    expect(second).toEqual(new RpcSerializedResult('{"n":1}'));
    expect(runs).toBe(1);
    expect(cache.serve(ctx({ a: 2 }), run)).toEqual(new RpcSerializedResult('{"n":2}'));
  });

  it('an async call is stored once it resolves; its error is not stored and propagates', async () => {
    const { cache } = cacheOver(new MemoryResultStore(10));
    await expect(cache.serve(ctx([1]), () => Promise.reject(new Error('no')))).rejects.toThrow('no');
    expect(await cache.serve(ctx([1]), () => Promise.resolve('yes'))).toEqual(new RpcSerializedResult('"yes"'));
    expect(cache.serve(ctx([1]), () => 'never')).toEqual(new RpcSerializedResult('"yes"'));
  });

  it('a purge (a bumped generation) is seen by the next call', async () => {
    const { cache, shared } = cacheOver(new MemoryResultStore(10));
    cache.serve(ctx({}), () => 1);
    await shared.generations.bump([RpcResultCache.methodGeneration('m')]);
    expect(cache.serve(ctx({}), () => 2)).toEqual(new RpcSerializedResult('2'));
  });

  it('a store that fails serves uncached, logging once until it answers again', async () => {
    let down = true;
    const entries = new Map<string, string>();
    const flaky: RpcResultStore = {
      get: (key) => (down ? Promise.reject(new Error('redis down')) : Promise.resolve(entries.get(key))),
      set: (key, json) => (down ? Promise.reject(new Error('redis down')) : Promise.resolve(void entries.set(key, json))),
    };
    const { cache, warnings } = cacheOver(flaky);
    let runs = 0;
    expect(await cache.serve(ctx({}), () => ++runs)).toEqual(new RpcSerializedResult('1'));
    expect(await cache.serve(ctx({}), () => ++runs)).toEqual(new RpcSerializedResult('2'));
    expect(warnings.lines).toEqual(['Result cache unavailable (first met by m), serving uncached: redis down']);
    down = false;
    expect(await cache.serve(ctx({}), () => ++runs)).toEqual(new RpcSerializedResult('3'));
    expect(await cache.serve(ctx({}), () => ++runs)).toEqual(new RpcSerializedResult('3'));
    expect(warnings.lines.slice(1)).toEqual(['Result cache available again']);
  });

  it('a store behind a connection that is down is skipped at once: no read, no write', async () => {
    const touched: string[] = [];
    const store: RpcResultStore = {
      get: (key) => void touched.push(`get ${key}`),
      set: (key) => void touched.push(`set ${key}`),
    };
    const shared = new RpcResultCache(store, new LocalCacheGenerations(), 'p:', 'redis', () => false);
    const cache = new RpcMethodCache('m', { ttl: 60 }, shared, undefined, { warn: () => undefined, log: () => undefined } as never);
    let runs = 0;
    expect(cache.serve(ctx({}), () => ++runs)).toEqual(new RpcSerializedResult('1'));
    expect(cache.serve(ctx({}), () => ++runs)).toEqual(new RpcSerializedResult('2'));
    expect(touched).toEqual([]);
  });

  it('the answer waits for the store write, so the caller\'s next call finds the entry', async () => {
    let release!: () => void;
    const writes: string[] = [];
    const slow: RpcResultStore = {
      get: () => undefined,
      set: (key, json) => new Promise<void>((resolve) => (release = () => (writes.push(json), resolve()))),
    };
    const { cache } = cacheOver(slow);
    let settled = false;
    const answer = Promise.resolve(cache.serve(ctx({}), () => 'v')).then((r) => ((settled = true), r));
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    release();
    expect(await answer).toEqual(new RpcSerializedResult('"v"'));
    expect(writes).toEqual(['"v"']);
  });
});
