import { isObservable, type Observable } from 'rxjs';

/** What a stream handler may return: an AsyncIterable, an Iterable (not a string) or an rxjs Observable. */
export function isStreamSource(value: unknown): boolean {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return false;
  return (
    typeof (value as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function' ||
    typeof (value as Iterable<unknown>)[Symbol.iterator] === 'function' ||
    isObservable(value)
  );
}

/** One pull-based iterator over any stream source; `next()` may return a value or a promise. */
export function iteratorOf(source: unknown): AsyncIterator<unknown> | Iterator<unknown> {
  const s = source as AsyncIterable<unknown> & Iterable<unknown>;
  if (typeof s[Symbol.asyncIterator] === 'function') return s[Symbol.asyncIterator]();
  if (isObservable(source)) return observableIterator(source);
  return s[Symbol.iterator]();
}

/**
 * An Observable as an async iterator. Observables push and cannot be paused, so values wait in an
 * unbounded queue until pulled; `return()` unsubscribes.
 */
function observableIterator(observable: Observable<unknown>): AsyncIterator<unknown> {
  const queue: unknown[] = [];
  let finished = false;
  let failure: { error: unknown } | undefined;
  let wake: (() => void) | undefined;
  const notify = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  const subscription = observable.subscribe({
    next: (value) => {
      queue.push(value);
      notify();
    },
    error: (error) => {
      failure = { error };
      notify();
    },
    complete: () => {
      finished = true;
      notify();
    },
  });
  return {
    async next(): Promise<IteratorResult<unknown>> {
      for (;;) {
        if (queue.length) return { done: false, value: queue.shift() };
        if (failure) throw failure.error;
        if (finished) return { done: true, value: undefined };
        await new Promise<void>((resolve) => (wake = resolve));
      }
    },
    async return(): Promise<IteratorResult<unknown>> {
      subscription.unsubscribe();
      finished = true;
      queue.length = 0;
      return { done: true, value: undefined };
    },
  };
}
