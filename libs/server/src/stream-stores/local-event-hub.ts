import type { DurableEventListener } from './stream-store.js';
import type { DurableStreamEvent } from '@nest-jsonrpc/protocol';

/**
 * In-process fan-out for the stores whose commits happen in this process (memory, SQLite):
 * listeners per stream id, and cancel listeners. A listener that throws is isolated from the others.
 */
export class LocalEventHub {
  private readonly listeners = new Map<string, Set<DurableEventListener>>();
  private readonly cancelListeners = new Set<(id: string) => void>();

  subscribe(id: string, listener: DurableEventListener): () => void {
    let set = this.listeners.get(id);
    if (!set) this.listeners.set(id, (set = new Set()));
    set.add(listener);
    return () => {
      const current = this.listeners.get(id);
      if (!current) return;
      current.delete(listener);
      if (current.size === 0) this.listeners.delete(id);
    };
  }

  publish(id: string, events: readonly DurableStreamEvent[]): void {
    const set = this.listeners.get(id);
    if (!set) return;
    for (const listener of set) {
      try {
        listener(events);
      } catch {
        // A subscriber's failure is its own; the commit already happened.
      }
    }
  }

  onCancel(listener: (id: string) => void): () => void {
    this.cancelListeners.add(listener);
    return () => this.cancelListeners.delete(listener);
  }

  publishCancel(id: string): void {
    for (const listener of this.cancelListeners) {
      try {
        listener(id);
      } catch {
        // isolated, as above
      }
    }
  }

  clear(): void {
    this.listeners.clear();
    this.cancelListeners.clear();
  }
}
