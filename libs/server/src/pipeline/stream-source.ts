/**
 * What a stream handler returns, and how rows are pulled from it.
 *
 * Nest's `ExternalContextCreator` settles a handler's Observable to its *last* value (and the
 * interceptor chain flattens it). A stream handler's value is therefore boxed before it leaves
 * the handler, so guards, interceptors and pipes still run, but the Observable (or generator)
 * reaches the stream writer (or the durable runner) untouched and streams row by row.
 */
import { isObservable, type Observable, type Subscription } from 'rxjs';
import { RpcMetadataAccessor } from '../registry/rpc-metadata-accessor.js';

/**
 * A stream handler's return value, hidden from Nest's result handling. Boxed once, by the handler's
 * wrapper (`boxingStreamHandler`), and opened once, by the route that streams it; layers between
 * (row checks, observation) wrap its source in place (`wrapStreamSource`).
 *
 * The box is an AsyncIterable of the rows, as a controller's streaming body is in Nest 12: an
 * interceptor that maps such bodies row by row — Nest's `ClassSerializerInterceptor` and
 * `StandardSchemaSerializerInterceptor` — serializes each row and hands back an iterable of its
 * own, which is streamed instead. Without this, they serialized the box itself into `{}` and every
 * stream failed (-32603 "a @RpcStream handler must return ...").
 */
export class StreamSourceBox implements AsyncIterable<unknown> {
  /** Whether its rows were taken: a box is streamed once, to the request whose handler made it. */
  private opened = false;

  constructor(public source: unknown) {}

  /**
   * The source, once. A second opening is a box an interceptor kept and answered another request
   * with — Nest's `CacheInterceptor` caches GET answers by URL, `GET <stream.path>` included — whose
   * rows are gone (an exhausted generator: an empty stream) or belong to another caller (an array):
   * refused instead, with the cause in the message.
   */
  open(): unknown {
    this.assertUnopened();
    this.opened = true;
    return this.source;
  }

  assertUnopened(): void {
    if (this.opened) throw new StreamAlreadyStreamedError();
  }

  [Symbol.asyncIterator](): AsyncIterator<unknown> {
    return asyncRows(rowIteratorOf(this));
  }
}

/** A stream handler's value answered a second time, by an interceptor that kept it (a cache). */
export class StreamAlreadyStreamedError extends Error {
  constructor() {
    super(
      "this stream's rows were already streamed to another request: an interceptor answered this call with a value it kept, not the handler's " +
        "(an app-wide CacheInterceptor caches every GET by URL, GET /rpc/stream included: give it a trackBy that returns undefined for the module's stream path)",
    );
    this.name = 'StreamAlreadyStreamedError';
  }
}

/** An async view of a row iterator, for whatever iterates with `for await`. */
function asyncRows(iterator: RowIterator): AsyncIterator<unknown> {
  return {
    next: async () => iterator.next(),
    return: async (value?: unknown) => {
      await iterator.return?.();
      return { value, done: true };
    },
  };
}

/**
 * `value`'s stream source passed through `wrap`, kept in its box; a value an interceptor returned
 * without the box (it replaced it) gets one.
 */
export function wrapStreamSource(value: unknown, wrap: (source: unknown) => unknown): StreamSourceBox {
  if (!(value instanceof StreamSourceBox)) return new StreamSourceBox(wrap(value));
  value.source = wrap(value.source);
  return value;
}

/** A thenable: a handler's Promise (or any PromiseLike), settled by awaiting it. */
export function isPromiseLike(value: unknown): value is Promise<unknown> {
  return value !== null && typeof value === 'object' && typeof (value as PromiseLike<unknown>).then === 'function';
}

/**
 * Wraps a stream handler so that what it returns (or what its Promise resolves to) comes back in
 * a `StreamSourceBox`. The wrapper carries the handler's metadata (Nest reads enhancers from the
 * function it calls).
 */
export function boxingStreamHandler(handler: (...args: unknown[]) => unknown): (...args: unknown[]) => unknown {
  const box = (value: unknown) => new StreamSourceBox(value);
  const boxed = function (this: unknown, ...args: unknown[]): unknown {
    const result = handler.apply(this, args);
    return isPromiseLike(result) ? Promise.resolve(result).then(box) : new StreamSourceBox(result);
  };
  RpcMetadataAccessor.copyHandlerMetadata(handler, boxed);
  Object.defineProperty(boxed, 'name', { value: handler.name });
  return boxed;
}

/** Opens the box: the source in it, or `value` itself when an interceptor replaced the box. */
function unboxStreamSource(value: unknown): unknown {
  return value instanceof StreamSourceBox ? value.open() : value;
}

/**
 * The rows of a stream, pulled one at a time. `next()` may answer synchronously (sync iterables)
 * so a sync source costs no Promise per row.
 */
export interface RowIterator {
  next(): IteratorResult<unknown> | Promise<IteratorResult<unknown>>;
  /** Stops the producer (runs a generator's `finally`). Safe to call more than once. */
  return?(): unknown;
  /**
   * For a consumer that awaits each step itself: `next()` without the iterator watching the step
   * through a promise of its own. The consumer then hands every step back once it has it —
   * `stepSettled(step)`, or `stepFailed(error)` when it threw or rejected — before acting on it. An
   * iterator that watches its steps (the observed rows of a stream) offers these three; the
   * others leave them out and `next()` is all there is.
   */
  nextUnwatched?(): IteratorResult<unknown> | Promise<IteratorResult<unknown>>;
  stepSettled?(step: IteratorResult<unknown>): void;
  stepFailed?(error: unknown): void;
}

/**
 * A handler value that is not a stream: a programming error, answered -32603 before the stream
 * starts. The handler's, or an interceptor's that replaced it (one mapping the value, not its rows).
 */
export class NotAStreamSourceError extends TypeError {
  constructor(value: unknown) {
    const what = value === null ? 'null' : typeof value === 'object' ? (value.constructor?.name ?? 'object') : typeof value;
    super(
      `a @RpcStream handler must return an AsyncIterable, an Iterable or an Observable, got ${what} ` +
        '(or an interceptor replaced its value: interceptors get the rows as an AsyncIterable, as a streaming body of Nest 12, and should map the rows)',
    );
    this.name = 'NotAStreamSourceError';
  }
}

/**
 * A row source that hands out its own `RowIterator` (an observed stream's rows, counted and
 * watched for how they end). `rowIteratorOf` takes its iterator as is, so a synchronous source
 * stays synchronous; anything else iterating it with `for await` gets an async view.
 */
export abstract class RowSource implements AsyncIterable<unknown> {
  abstract rowIterator(): RowIterator;

  [Symbol.asyncIterator](): AsyncIterator<unknown> {
    return asyncRows(this.rowIterator());
  }
}

/**
 * The row iterator of an AsyncIterable, an Iterable (strings excluded: a string is one value,
 * not a stream of characters) or an rxjs Observable — bare or in its `StreamSourceBox`, so the
 * value `RpcPipeline.run` returns is pulled as is. Throws `NotAStreamSourceError` otherwise.
 */
export function rowIteratorOf(value: unknown): RowIterator {
  const source = unboxStreamSource(value);
  if (source instanceof RowSource) return source.rowIterator();
  if (source !== null && typeof source === 'object') {
    const asyncFactory = (source as AsyncIterable<unknown>)[Symbol.asyncIterator];
    if (typeof asyncFactory === 'function') return asyncFactory.call(source) as AsyncIterator<unknown>;
    if (isObservable(source)) return new ObservableRowIterator(source);
    const syncFactory = (source as Iterable<unknown>)[Symbol.iterator];
    if (typeof syncFactory === 'function') return syncFactory.call(source) as Iterator<unknown>;
  }
  throw new NotAStreamSourceError(source);
}

/** Throws `NotAStreamSourceError` unless `rowIteratorOf` can pull `value` — without asking it for an iterator. */
export function assertRowSource(value: unknown): void {
  if (value instanceof StreamSourceBox) value.assertUnopened();
  const source = value instanceof StreamSourceBox ? value.source : value;
  if (source instanceof RowSource) return;
  if (source !== null && typeof source === 'object') {
    if (typeof (source as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function' || isObservable(source)) return;
    if (typeof (source as Iterable<unknown>)[Symbol.iterator] === 'function') return;
  }
  throw new NotAStreamSourceError(source);
}

/**
 * Runs a producer's `return()` (a generator's `finally` blocks) without waiting for it: a producer
 * that ignores its signal must not hold a stream or a shutdown hostage. Failures go to `onError`.
 */
export function stopRowIterator(iterator: RowIterator, onError: (error: unknown) => void): void {
  const stop = iterator.return;
  if (typeof stop !== 'function') return;
  try {
    const result = stop.call(iterator);
    if (isPromiseLike(result)) result.then(undefined, onError);
  } catch (error) {
    onError(error);
  }
}

type Waiter = { resolve: (r: IteratorResult<unknown>) => void; reject: (e: unknown) => void };

/**
 * Pulls an Observable as an iterator. An Observable cannot be paused, so values it pushes while
 * the socket is full wait in `queue`: use an AsyncIterable when the producer can outrun the
 * client. Subscribes on the first `next()`; `return()` unsubscribes.
 */
class ObservableRowIterator implements RowIterator {
  private subscription: Subscription | undefined;
  private readonly queue: unknown[] = [];
  private waiter: Waiter | undefined;
  private completed = false;
  private failed = false;
  private failure: unknown;
  private stopped = false;

  constructor(private readonly observable: Observable<unknown>) {}

  next(): IteratorResult<unknown> | Promise<IteratorResult<unknown>> {
    if (!this.subscription && !this.stopped) this.subscribe();
    if (this.queue.length) return { value: this.queue.shift(), done: false };
    if (this.failed) {
      this.failed = false;
      this.stopped = true;
      return Promise.reject(this.failure);
    }
    if (this.completed || this.stopped) return { value: undefined, done: true };
    return new Promise((resolve, reject) => (this.waiter = { resolve, reject }));
  }

  return(): IteratorResult<unknown> {
    this.stopped = true;
    this.queue.length = 0;
    this.subscription?.unsubscribe();
    this.settle({ value: undefined, done: true });
    return { value: undefined, done: true };
  }

  private subscribe(): void {
    this.subscription = this.observable.subscribe({
      next: (value) => {
        if (this.stopped) return;
        if (this.waiter) this.settle({ value, done: false });
        else this.queue.push(value);
      },
      error: (error: unknown) => {
        if (this.stopped) return;
        if (this.waiter) {
          const { reject } = this.waiter;
          this.waiter = undefined;
          this.stopped = true;
          reject(error);
        } else {
          this.failed = true;
          this.failure = error;
        }
      },
      complete: () => {
        this.completed = true;
        this.settle({ value: undefined, done: true });
      },
    });
  }

  private settle(result: IteratorResult<unknown>): void {
    const waiter = this.waiter;
    if (!waiter) return;
    this.waiter = undefined;
    waiter.resolve(result);
  }
}
