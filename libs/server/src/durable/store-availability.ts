import { RpcInternalErrorException } from '../errors/rpc-exceptions.js';
import { STORE_UNAVAILABLE_MESSAGE } from '@nest-jsonrpc/protocol';
import { StreamStoreUnavailableError } from '../stream-stores/stream-store-unavailable.js';
import type { StreamStore } from '../stream-stores/stream-store.js';

/**
 * Whether the durable store is reachable, as the store announces it (`onAvailability`), so that
 * producers and subscribers waiting through an outage retry the moment it is back rather than at
 * their next poll. A store that announces nothing is always "available": its operations' errors
 * alone tell.
 */
export class StoreAvailability {
  private up = true;
  private readonly waiters = new Set<() => void>();
  private readonly listeners = new Set<(available: boolean) => void>();
  private readonly off: (() => void) | undefined;

  constructor(store: StreamStore) {
    this.off = store.onAvailability?.((available) => this.set(available));
  }

  get available(): boolean {
    return this.up;
  }

  /** Resolves when the store is announced back, or after `maxWaitMs` (time to try again anyway). */
  whenBack(maxWaitMs: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, maxWaitMs);
      timer.unref();
      this.waiters.add(done);
    });
  }

  onChange(listener: (available: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Stops listening to the store and releases every waiter. */
  close(): void {
    this.off?.();
    this.listeners.clear();
    for (const wake of [...this.waiters]) wake();
  }

  private set(available: boolean): void {
    if (available === this.up) return;
    this.up = available;
    for (const listener of [...this.listeners]) listener(available);
    if (available) for (const wake of [...this.waiters]) wake();
  }
}

/** `work`, or `StreamStoreUnavailableError` once it has taken `timeoutMs`. */
export function withinStoreTimeout<T>(work: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StreamStoreUnavailableError(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** What a caller is told when the store cannot be reached: -32603 `Stream store unavailable`. */
export function storeUnavailableException(cause: unknown): RpcInternalErrorException {
  return new RpcInternalErrorException(STORE_UNAVAILABLE_MESSAGE, { cause });
}
