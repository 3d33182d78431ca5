import type { FastifyRequest } from 'fastify';
import type { RpcCacheOptions, RpcCacheScope } from '../decorators/rpc-cache.decorator.js';
import type { RpcContext } from '../dispatch/rpc-context.js';
import { callerUserId, type UserIdResolver } from '../security/caller-identity.js';
import type { CacheGenerations } from './cache-generations.js';
import type { RpcResultStore } from './result-stores.js';
import { paramsHash } from './stable-params-hash.js';

/** The store behind every `@RpcCache` method, plus its generations. */
export class RpcResultCache {
  constructor(
    readonly store: RpcResultStore,
    readonly generations: CacheGenerations,
    readonly keyPrefix: string,
    /** Where the cache lives, for the startup log: `memory`, `CACHE_MANAGER` or `redis`. */
    readonly kind: string,
  ) {}

  static methodGeneration(method: string): string {
    return `m:${JSON.stringify(method)}`;
  }

  static paramsGeneration(method: string, hash: string): string {
    return `p:${JSON.stringify(method)}${hash}`;
  }

  static tagGeneration(tag: string): string {
    return `t:${JSON.stringify(tag)}`;
  }

  static readonly ALL_GENERATION = '*';
}

type ScopeOf = (ctx: RpcContext) => string;

function scopeFunction(scope: RpcCacheScope, userIdResolver: UserIdResolver | undefined): ScopeOf {
  if (typeof scope === 'function') {
    return (ctx) => {
      const value = scope(ctx);
      if (typeof value !== 'string') throw new TypeError(`@RpcCache scope function of ${ctx.method} returned ${typeof value}, not a string`);
      return `f:${value}`;
    };
  }
  switch (scope) {
    case 'user':
      // Anonymous callers have no identity: they share the anonymous entry, never a user's.
      return (ctx) => {
        const id = callerUserId(ctx.request as FastifyRequest, userIdResolver);
        return id === undefined ? 'anon' : `u:${id}`;
      };
    case 'ip':
      return (ctx) => `ip:${String(ctx.request.ip)}`;
    default:
      return () => 'g';
  }
}

/**
 * `@RpcCache` of one method, prepared at startup. The key is
 * `<prefix>c:<method JSON><scope JSON><params hash>:<generations>`: JSON string literals delimit
 * themselves, so no method/scope pair can collide with another.
 */
export class RpcMethodCache {
  private readonly keyHead: string;
  private readonly methodJson: string;
  private readonly fixedGenerations: readonly string[];
  private readonly scopeOf: ScopeOf;
  private readonly ttlMs: number;

  constructor(
    readonly method: string,
    readonly options: Readonly<RpcCacheOptions>,
    private readonly store: RpcResultCache,
    userIdResolver: UserIdResolver | undefined,
  ) {
    this.methodJson = JSON.stringify(method);
    this.keyHead = `${store.keyPrefix}c:${this.methodJson}`;
    this.fixedGenerations = [
      RpcResultCache.ALL_GENERATION,
      RpcResultCache.methodGeneration(method),
      ...(options.tags ?? []).map((t) => RpcResultCache.tagGeneration(t)),
    ];
    this.scopeOf = scopeFunction(options.scope ?? 'global', userIdResolver);
    this.ttlMs = Math.round(options.ttl * 1000);
  }

  /** This call's entry key (reads the generations, so a purge is seen at once). */
  keyFor(ctx: RpcContext): string | Promise<string> {
    const hash = paramsHash(ctx.params);
    const head = `${this.keyHead}${JSON.stringify(this.scopeOf(ctx))}${hash}:`;
    const generations = this.store.generations.read(this.fixedGenerations, RpcResultCache.paramsGeneration(this.method, hash));
    return typeof generations === 'string' ? head + generations : generations.then((g) => head + g);
  }

  get(key: string): string | undefined | Promise<string | undefined> {
    return this.store.store.get(key);
  }

  set(key: string, json: string): void | Promise<unknown> {
    return this.store.store.set(key, json, this.ttlMs);
  }
}
