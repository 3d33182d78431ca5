import type { ThrottlerStorage } from '@nestjs/throttler';

interface WindowRecord {
  hits: number;
  expiresAt: number;
  blockExpiresAt: number;
}

export interface ThrottlerStorageRecordLike {
  totalHits: number;
  timeToExpire: number;
  isBlocked: boolean;
  timeToBlockExpire: number;
}

const SWEEP_EVERY = 4096;
const seconds = (ms: number) => Math.max(0, Math.ceil(ms / 1000));

/**
 * In-process `ThrottlerStorage` used when the app registered no `ThrottlerModule` and no Redis.
 * A fixed window per key: O(1) per call. (The throttler's own `ThrottlerStorageService` keeps one
 * timestamp per hit and filters them on every call, which costs O(limit) per call — too slow for
 * the generous limits public APIs set.) Expired windows are swept every few thousand calls, so no
 * timer is left running.
 *
 * `blockDuration` 0: over the limit until the window ends. > 0: blocked that long once over.
 */
export class RpcMemoryThrottlerStorage implements ThrottlerStorage {
  private readonly records = new Map<string, WindowRecord>();
  private sinceSweep = 0;

  increment(key: string, ttl: number, limit: number, blockDuration: number, _throttlerName?: string): Promise<ThrottlerStorageRecordLike> {
    return Promise.resolve(this.incrementNow(key, ttl, limit, blockDuration, Date.now()));
  }

  /** The counting itself, synchronous (exact under any concurrency in one process). */
  incrementNow(key: string, ttl: number, limit: number, blockDuration: number, now: number): ThrottlerStorageRecordLike {
    if (++this.sinceSweep >= SWEEP_EVERY) this.sweep(now);
    let record = this.records.get(key);
    if (record !== undefined && record.blockExpiresAt > now) {
      return { totalHits: record.hits, timeToExpire: seconds(record.expiresAt - now), isBlocked: true, timeToBlockExpire: seconds(record.blockExpiresAt - now) };
    }
    if (record === undefined || record.expiresAt <= now) {
      record = { hits: 0, expiresAt: now + ttl, blockExpiresAt: 0 };
      this.records.set(key, record);
    }
    const hits = ++record.hits;
    const timeToExpire = seconds(record.expiresAt - now);
    if (hits <= limit) return { totalHits: hits, timeToExpire, isBlocked: false, timeToBlockExpire: 0 };
    if (blockDuration > 0) {
      record.blockExpiresAt = now + blockDuration;
      return { totalHits: hits, timeToExpire, isBlocked: true, timeToBlockExpire: seconds(blockDuration) };
    }
    return { totalHits: hits, timeToExpire, isBlocked: true, timeToBlockExpire: timeToExpire };
  }

  /** Number of live windows (for tests and diagnostics). */
  get size(): number {
    return this.records.size;
  }

  private sweep(now: number): void {
    this.sinceSweep = 0;
    for (const [key, record] of this.records) {
      if (record.expiresAt <= now && record.blockExpiresAt <= now) this.records.delete(key);
    }
  }
}
