import type { Logger } from '@nestjs/common';
import { serializeResult } from '@nest-jsonrpc/protocol';
import { callerUserId } from '../context/caller-identity.js';
import type { RpcContext } from '../context/rpc-context.js';
import type { RpcCacheOptions, RpcCacheScope } from '../decorators/rpc-cache.js';
import type { UserIdResolver } from '../options/json-rpc-options.js';
import type { CacheGenerations } from './cache-generations.js';
import type { RpcResultStore } from './result-stores.js';
import { RpcSerializedResult } from './serialized-result.js';
import { paramsHash } from './stable-params-hash.js';

/** The store behind every `@RpcCache` method, plus its generations. */
export class RpcResultCache {
  private failing = false;
  private logger: Pick<Logger, 'warn' | 'log'> | undefined;

  constructor(
    readonly store: RpcResultStore,
    readonly generations: CacheGenerations,
    readonly keyPrefix: string,
    /** Where the cache lives, for the startup log: `memory`, `CACHE_MANAGER` or `redis`. */
    readonly kind: string,
    /**
     * For a store behind a connection (Redis): whether it is up right now. While it is not, calls
     * skip the cache at once — no read, no write, no generation created — instead of meeting each
     * store operation's own way of failing (some wait for a reconnect attempt).
     */
    readonly connected?: () => boolean,
  ) {}

  /**
   * A store operation failed: every call is answered uncached until it works again. One warning
   * when that starts (the first method to meet it), one line when the store answers again.
   */
  storeFailed(method: string, error: unknown, logger: Pick<Logger, 'warn' | 'log'>): void {
    if (this.failing) return;
    this.failing = true;
    this.logger = logger;
    logger.warn(`Result cache unavailable (first met by ${method}), serving uncached: ${error instanceof Error ? error.message : String(error)}`);
  }

  /** A store operation succeeded. */
  storeAnswered(): void {
    if (!this.failing) return;
    this.failing = false;
    this.logger?.log('Result cache available again');
  }

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
        const id = callerUserId(ctx.request, userIdResolver);
        return id === undefined ? 'anon' : `u:${id}`;
      };
    case 'ip':
      return (ctx) => `ip:${String(ctx.request.ip)}`;
    default:
      return () => 'g';
  }
}

/**
 * `@RpcCache` of one method, prepared at startup: serves a call from the cache or runs it and
 * stores its JSON. The key is `<prefix>c:<method JSON><scope JSON><params hash>:<generations>`:
 * JSON string literals delimit themselves, so no method/scope pair can collide with another.
 */
export class RpcMethodCache {
  private readonly keyHead: string;
  private readonly fixedGenerations: readonly string[];
  private readonly scopeOf: ScopeOf;
  private readonly ttlMs: number;
  /**
   * Single flight: the pending answer of each key being filled right now. Calls for a key that is
   * already being looked up or computed wait for that answer instead of running the handler
   * again — once per key per process (instances sharing Redis each run it once; see docs).
   */
  private readonly flights = new Map<string, Promise<unknown>>();

  constructor(
    readonly method: string,
    readonly options: Readonly<RpcCacheOptions>,
    private readonly shared: RpcResultCache,
    userIdResolver: UserIdResolver | undefined,
    private readonly logger: Logger,
  ) {
    this.keyHead = `${shared.keyPrefix}c:${JSON.stringify(method)}`;
    this.fixedGenerations = [
      RpcResultCache.ALL_GENERATION,
      RpcResultCache.methodGeneration(method),
      ...(options.tags ?? []).map((t) => RpcResultCache.tagGeneration(t)),
    ];
    this.scopeOf = scopeFunction(options.scope ?? 'global', userIdResolver);
    this.ttlMs = Math.round(options.ttl * 1000);
  }

  /**
   * The call's answer from the cache, or `run()`'s value stored and returned as JSON
   * (`RpcSerializedResult`). Stays synchronous while the store and the handler are (the
   * in-process store on a hit), so a hit costs a key and a Map lookup. A store that fails is
   * logged (once per outage) and the call answered uncached: a cache outage must not take the
   * API down. Errors of `run()` and of the scope function (the app's bug) propagate.
   */
  serve(ctx: RpcContext, run: () => unknown): unknown {
    if (this.shared.connected !== undefined && !this.shared.connected()) return this.fill(undefined, run, false);
    const key = this.keyFor(ctx);
    if (typeof key !== 'string') return this.serveAsync(key, run);
    let hit: string | undefined | Promise<string | undefined>;
    try {
      hit = this.shared.store.get(key);
    } catch (error) {
      this.storeFailed(error);
      return this.fill(undefined, run, false);
    }
    if (typeof hit === 'string') return new RpcSerializedResult(hit);
    // A miss: the entry may be on its way (another call computing it), then that is the answer.
    const flight = this.flights.get(key);
    if (flight !== undefined) {
      if (hit !== undefined) hit.then(undefined, () => undefined);
      return flight;
    }
    if (hit === undefined) return this.fill(key, run, true);
    return this.fly(key, this.lookUpAndFill(key, run, hit));
  }

  /** This call's entry key (reads the generations, so a purge is seen at once). */
  keyFor(ctx: RpcContext): string | Promise<string> {
    const hash = paramsHash(ctx.params);
    const head = `${this.keyHead}${JSON.stringify(this.scopeOf(ctx))}${hash}:`;
    const generations = this.shared.generations.read(this.fixedGenerations, RpcResultCache.paramsGeneration(this.method, hash), this.ttlMs);
    return typeof generations === 'string' ? head + generations : generations.then((g) => head + g);
  }

  /** The key came from a store: wait for it, then join the key's flight or start one. */
  private async serveAsync(pendingKey: Promise<string>, run: () => unknown): Promise<unknown> {
    let key: string;
    try {
      key = await pendingKey;
    } catch (error) {
      this.storeFailed(error);
      return this.fill(undefined, run, false);
    }
    return this.flights.get(key) ?? this.fly(key, this.lookUpAndFill(key, run));
  }

  private async lookUpAndFill(key: string, run: () => unknown, pendingHit?: Promise<string | undefined>): Promise<unknown> {
    let hit: string | undefined;
    try {
      hit = await (pendingHit ?? this.shared.store.get(key));
    } catch (error) {
      this.storeFailed(error);
      return this.fill(undefined, run, false);
    }
    this.shared.storeAnswered();
    if (typeof hit === 'string') return new RpcSerializedResult(hit);
    return this.fill(key, run, false);
  }

  /**
   * Runs the call and stores its JSON under `key` (none: the store failed, just answer). A call
   * that answers later becomes the key's flight when `flying` (nothing else made one).
   */
  private fill(key: string | undefined, run: () => unknown, flying: boolean): unknown {
    const value = run();
    if (value !== null && typeof value === 'object' && typeof (value as PromiseLike<unknown>).then === 'function') {
      const answer = (value as Promise<unknown>).then((settled) => this.store(key, settled));
      return flying && key !== undefined ? this.fly(key, answer) : answer;
    }
    return this.store(key, value);
  }

  /** Makes `answer` the flight of `key` until it settles (the entry is written by then). */
  private fly(key: string, answer: Promise<unknown>): Promise<unknown> {
    this.flights.set(key, answer);
    const land = (): void => {
      if (this.flights.get(key) === answer) this.flights.delete(key);
    };
    answer.then(land, land);
    return answer;
  }

  private store(key: string | undefined, value: unknown): RpcSerializedResult | Promise<RpcSerializedResult> {
    const result = new RpcSerializedResult(serializeResult(value));
    if (key === undefined) return result;
    let writing: void | Promise<unknown>;
    try {
      writing = this.shared.store.set(key, result.json, this.ttlMs);
    } catch (error) {
      this.storeFailed(error);
      return result;
    }
    if (writing === undefined) return result;
    // Answer once the entry is written, so the caller's next call finds it.
    return writing.then(
      () => result,
      (error) => {
        this.storeFailed(error);
        return result;
      },
    );
  }

  private storeFailed(error: unknown): void {
    this.shared.storeFailed(this.method, error, this.logger);
  }
}
