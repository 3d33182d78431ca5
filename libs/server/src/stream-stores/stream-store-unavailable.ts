import { STORE_UNAVAILABLE_MESSAGE } from '@nest-jsonrpc/protocol';

/**
 * What a store throws when it cannot be reached right now (Redis down or reconnecting, SQLite busy
 * or out of disk) — as opposed to a refusal or a bug. The durable layer answers it with -32603
 * `Stream store unavailable` (503 + `Retry-After` on the REST routes), keeps a producer's events
 * buffered and retries, and lets attached clients wait for the store to come back.
 */
export class StreamStoreUnavailableError extends Error {
  constructor(detail: string, options?: { cause?: unknown }) {
    super(`${STORE_UNAVAILABLE_MESSAGE}: ${detail}`, options);
    this.name = 'StreamStoreUnavailableError';
  }
}
