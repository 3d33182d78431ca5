import { randomUUID } from 'node:crypto';
import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationShutdown,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import {
  isTerminalEvent,
  STORE_UNAVAILABLE_EVENT_DATA,
  type DurableStartAnswer,
  type DurableStreamEvent,
  type DurableStreamStatus,
} from '@nest-jsonrpc/protocol';
import { plainResult } from '../caching/serialized-result.js';
import { callerUserId } from '../context/caller-identity.js';
import { RpcExceptionMapper } from '../errors/rpc-exception-mapper.js';
import { RpcRateLimitExceededException } from '../errors/rpc-exceptions.js';
import type { ResolvedDurableOptions } from '../options/durable-options.js';
import type { ResolvedJsonRpcOptions } from '../options/json-rpc-options.js';
import { OPTIONS_SECTION } from '../options/option-section-tokens.js';
import { RpcPipeline, type RpcResolvedCall } from '../pipeline/rpc-pipeline.js';
import { assertRowSource, rowIteratorOf, stopRowIterator } from '../pipeline/stream-source.js';
import { SqliteStreamStore } from '../stream-stores/sqlite-stream-store.js';
import { StreamStoreUnavailableError } from '../stream-stores/stream-store-unavailable.js';
import type { AppendOutcome, CreateOutcome, StreamStore } from '../stream-stores/stream-store.js';
import { DurableEventIterator } from './durable-event-iterator.js';
import { durableLiveRows } from './durable-live-rows.js';
import { DurableRpcContext } from './durable-rpc-context.js';
import { DurableStreamRun } from './durable-stream-run.js';
import { DurableSubscription, type DurableEventSink } from './durable-subscription.js';
import { StoreAvailability, storeUnavailableException, withinStoreTimeout } from './store-availability.js';

/** Longest a shutdown waits for its streams' terminal events to come back from the store's fan-out. */
export const SHUTDOWN_FANOUT_GRACE_MS = 2000;

/** Resolves `heard` once the store fans out a terminal event of stream `id` (or at once if listening fails). */
async function terminalHeard(store: StreamStore, id: string): Promise<{ heard: Promise<void>; off: () => void }> {
  let hear!: () => void;
  const heard = new Promise<void>((resolve) => (hear = resolve));
  try {
    const off = await store.subscribe(id, (events) => {
      if (events.length && isTerminalEvent(events[events.length - 1].event)) hear();
    });
    return { heard, off };
  } catch {
    hear();
    return { heard, off: () => undefined };
  }
}

/** One row: what `produce` resolves to (a cached result's JSON text read back into its value). */
async function* valueAsRow(produce: () => unknown): AsyncGenerator<unknown> {
  yield plainResult(await produce());
}

/**
 * Durable streams at runtime, in this process: starts producers (through the pipeline, so guards,
 * roles, limits, pipes and params run before anything is stored), enforces `maxRunning`, cancels,
 * recovers streams a dead process left running, sweeps expired ones, and stops everything cleanly
 * on shutdown. Owns the store's lifecycle. Inert while `durable.enabled` is false.
 *
 * A `DurableCallStarter` by shape (the module hands it to the routes as one): an `implements`
 * clause would name that internal interface in the public typings, where `start`/`startLive` are
 * stripped from them.
 */
@Injectable()
export class DurableStreamRunner implements OnModuleInit, OnModuleDestroy, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger('JsonRpcDurable');
  private readonly runs = new Map<string, DurableStreamRun>();
  private storeRef: StreamStore | undefined;
  private availability: StoreAvailability | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;
  private offCancel: (() => void) | undefined;
  private shuttingDown = false;
  private readonly retentionMs: number;
  private readonly ownsStore: boolean;

  /** @internal */
  constructor(
    @Inject(OPTIONS_SECTION.durable) private readonly durable: ResolvedDurableOptions,
    @Inject(OPTIONS_SECTION.security) private readonly security: ResolvedJsonRpcOptions['security'],
    private readonly pipeline: RpcPipeline,
    private readonly mapper: RpcExceptionMapper,
  ) {
    this.retentionMs = durable.retention * 1000;
    this.ownsStore = durable.store === undefined;
  }

  get enabled(): boolean {
    return this.durable.enabled;
  }

  /** The store in use (the default SQLite one unless `durable.store` was given). */
  get store(): StreamStore {
    if (!this.storeRef) throw new Error('Durable streams are not enabled or the application is not initialised');
    return this.storeRef;
  }

  /** Milliseconds a finished stream is kept. */
  get retention(): number {
    return this.retentionMs;
  }

  /** Streams this process is producing right now. */
  get runningHere(): number {
    return this.runs.size;
  }

  /**
   * True once the application has begun to shut down (its first hook): no new stream starts, the
   * running ones are being stopped, and a readiness probe should send traffic elsewhere.
   */
  get draining(): boolean {
    return this.shuttingDown;
  }

  /**
   * `work` on the store, bounded by `durable.storeTimeoutMs`: past it, `StreamStoreUnavailableError`
   * (the REST routes answer it 503 with `Retry-After`).
   */
  bounded<T>(work: Promise<T>): Promise<T> {
    return withinStoreTimeout(work, this.durable.storeTimeoutMs);
  }

  async onModuleInit(): Promise<void> {
    if (!this.enabled) return;
    const store = this.durable.store ?? new SqliteStreamStore();
    await store.open();
    this.storeRef = store;
    this.availability = new StoreAvailability(store);
    this.pipeline.claimDurableStartsWith(this);
    this.offCancel = store.onCancel((id) => this.runs.get(id)?.abandon());
    const recovered = await store.recoverInterrupted(new Set(this.runs.keys()), Date.now());
    if (recovered.length) this.logger.warn(`Marked ${recovered.length} durable stream(s) left running by a previous process as interrupted`);
    const sweepEvery = Math.min(60_000, Math.max(250, Math.floor(this.retentionMs / 4)));
    this.sweepTimer = setInterval(() => void this.sweep(), sweepEvery);
    this.sweepTimer.unref();
  }

  /** Shutdown begins (every module's onModuleDestroy runs before any shutdown hook): refuse new starts, report draining. */
  onModuleDestroy(): void {
    if (this.storeRef) this.shuttingDown = true;
  }

  /**
   * Stop producing before the HTTP server closes: every run commits what it has, then its terminal
   * event — and that event has reached this process's subscribers before the server's close ends
   * their responses. With SQLite the fan-out is part of the commit; with Redis it is a PUBLISH that
   * comes back through the subscriber connection after the commit returns, so the terminal events
   * are listened for first and awaited (at most SHUTDOWN_FANOUT_GRACE_MS).
   */
  async beforeApplicationShutdown(): Promise<void> {
    const store = this.storeRef;
    if (!store) return;
    this.shuttingDown = true;
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    this.sweepTimer = undefined;
    const runs = [...this.runs.values()];
    const terminals = await Promise.all(runs.map((run) => terminalHeard(store, run.id)));
    try {
      // A store that is down cannot take the terminal events: wait for it at most storeTimeoutMs,
      // then leave those streams to recovery, as a crash would.
      await this.bounded(Promise.all(runs.map((run) => run.stop('interrupted')))).catch(() => {
        for (const run of runs) run.giveUp();
      });
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.all(terminals.map((t) => t.heard)),
        new Promise<void>((resolve) => (timer = setTimeout(resolve, SHUTDOWN_FANOUT_GRACE_MS))),
      ]);
      clearTimeout(timer);
      // One turn of the event loop for the subscribers' own writes (a live route pulls through an iterator).
      await new Promise<void>((resolve) => setImmediate(resolve));
    } finally {
      for (const t of terminals) t.off();
    }
  }

  async onApplicationShutdown(): Promise<void> {
    const store = this.storeRef;
    if (!store) return;
    this.storeRef = undefined;
    this.offCancel?.();
    this.availability?.close();
    // A store handed in through options may be shared with other app instances: close only ours.
    if (this.ownsStore) await store.close();
  }

  /** Deletes streams past retention now (also runs periodically). Returns how many. */
  async sweep(now = Date.now()): Promise<number> {
    try {
      const deleted = await this.store.sweep(now - this.retentionMs, now - 2 * this.retentionMs);
      if (deleted) this.logger.log(`Deleted ${deleted} durable stream(s) past retention`);
      return deleted;
    } catch (error) {
      this.logger.error(`Durable stream sweep failed: ${error instanceof Error ? error.message : String(error)}`);
      return 0;
    }
  }

  // ---- starting (the routes' DurableCallStarter) ------------------------------------------------

  /** @internal `POST <path>` on a durable method: start it and answer at once. */
  async start(call: RpcResolvedCall): Promise<DurableStartAnswer> {
    return this.answerOf(await this.launch(call, false));
  }

  /**
   * @internal
   * A method that is no stream, started as a durable stream (an MCP task of a plain method): the
   * stream is recorded first, then the whole call — guards, pipes, params, handler — runs in the
   * background, and its value is the stream's one `chunk` row. The handler's work is what must not
   * hold the request, so unlike `start` a guard's refusal ends the stream with `error` instead of
   * failing the start.
   */
  async startDeferred(call: RpcResolvedCall): Promise<DurableStartAnswer> {
    return this.answerOf(await this.launch(call, true));
  }

  /**
   * @internal
   * `POST <stream.path>` on a durable method: start it, then follow it from its first event as
   * rows for the stream writer. Leaving early detaches without cancelling.
   */
  async startLive(call: RpcResolvedCall): Promise<{ streamId: string; rows: AsyncIterable<unknown> }> {
    const run = await this.launch(call, false);
    return { streamId: run.id, rows: durableLiveRows(this.follow(run.id, 0), call.definition.stream!.format) };
  }

  private answerOf(run: DurableStreamRun): DurableStartAnswer {
    return { stream_id: run.id, sse_url: `${this.durable.path}/${run.id}`, status: 'running' };
  }

  /**
   * One durable start, one path down and one answer up: the call gets its stream's context, runs
   * through the pipeline — guards, pipes and params first, so their errors answer the call instead
   * of starting a stream; the handler; then `claim` (below), the pipeline's last step of a durable
   * start — and the value it answers is the stream's rows, which the run starts pulling. `deferred`
   * (a plain method): the stream is claimed first and the whole call is its one row, run later.
   */
  private async launch(call: RpcResolvedCall, deferred: boolean): Promise<DurableStreamRun> {
    const store = this.store;
    if (this.shuttingDown) throw new Error('durable stream refused: the server is shutting down');
    const id = randomUUID();
    const run = new DurableStreamRun(id, call.definition.name, store, this.mapper, this.logger, this.onRunReleased, this.availability!, this.durable);
    const durableCall: RpcResolvedCall = { ...call, ctx: new DurableRpcContext(call.ctx, id, run.signal) };
    let rows: unknown;
    if (deferred) {
      rows = valueAsRow(() => this.pipeline.run(durableCall));
      await this.claim(durableCall, rows);
    } else {
      rows = await this.pipeline.run(durableCall);
    }
    this.runs.set(id, run);
    run.start(rowIteratorOf(rows));
    return run;
  }

  /**
   * @internal
   * Records a durable start's stream, claiming its slot (`durable.maxRunning`), once its handler
   * answered `value` (the pipeline's `DurableStartClaim`, set at `onModuleInit`). A value that is no
   * stream, or a start over the limit, fails the call and leaves nothing behind.
   */
  async claim(call: RpcResolvedCall, value: unknown): Promise<void> {
    assertRowSource(value);
    const { definition, ctx } = call;
    // The owner is known once the guards ran (an auth guard sets `request.user`).
    const owner = callerUserId(ctx.request, this.security.userIdResolver) ?? null;
    const stream = { id: (ctx as DurableRpcContext).streamId, method: definition.name, owner, createdAt: Date.now(), limits: this.durable.maxRunning };
    let created: CreateOutcome;
    try {
      created = await this.create(this.store, stream);
    } catch (error) {
      stopRowIterator(rowIteratorOf(value), () => undefined);
      throw error;
    }
    if (created.ok) return;
    // Taking the iterator starts nothing (a generator runs on next()); return() lets it clean up.
    stopRowIterator(rowIteratorOf(value), () => undefined);
    throw new RpcRateLimitExceededException(
      created.scope === 'total'
        ? `Too many running durable streams: the limit is ${created.limit}`
        : `Too many running durable streams: the limit is ${created.limit} per user`,
      { data: { limit: created.limit } },
    );
  }

  /**
   * `store.create`, bounded by `storeTimeoutMs`: an unreachable store answers -32603 `Stream store
   * unavailable` and never hangs the call. A create still in flight when the bound passes may yet
   * succeed: that stream, which nobody was told of, is ended at once with the same error.
   */
  private async create(store: StreamStore, stream: Parameters<StreamStore['create']>[0]): Promise<CreateOutcome> {
    const creating = store.create(stream);
    try {
      return await this.bounded(creating);
    } catch (error) {
      if (!(error instanceof StreamStoreUnavailableError)) throw error;
      creating.then(
        (outcome) => {
          if (outcome.ok) void this.endUnannounced(store, stream.id);
        },
        () => undefined,
      );
      throw storeUnavailableException(error);
    }
  }

  /** Ends a stream created after its start was already answered "unavailable", retrying through the outage. */
  private async endUnannounced(store: StreamStore, id: string): Promise<void> {
    for (let attempt = 1; !this.shuttingDown; attempt++) {
      try {
        await store.append(id, [{ id: 0, event: 'error', data: STORE_UNAVAILABLE_EVENT_DATA }], true, Date.now());
        return;
      } catch (error) {
        if (!(error instanceof StreamStoreUnavailableError)) return;
        await this.availability?.whenBack(Math.min(attempt * 100, 1000));
      }
    }
  }

  private readonly onRunReleased = (run: DurableStreamRun): void => {
    if (this.runs.get(run.id) === run) this.runs.delete(run.id);
  };

  // ---- following and cancelling -------------------------------------------------------------------

  /** Follows a stream after `cursor` as an async iterator of committed events, to the terminal one. */
  follow(id: string, cursor: number): DurableEventIterator {
    const iterator = new DurableEventIterator();
    this.subscribe(id, cursor, iterator);
    return iterator;
  }

  /** @internal Delivers a stream's committed events after `cursor` to `sink`, exactly once and in order. */
  subscribe(id: string, cursor: number, sink: DurableEventSink): DurableSubscription {
    const subscription = new DurableSubscription(this.store, id, cursor, sink, this.availability!, this.durable.outageGraceMs);
    sink.bind(subscription);
    void subscription.start();
    return subscription;
  }

  /** Events with id > `after`, at most `limit`. */
  read(id: string, after: number, limit: number): Promise<DurableStreamEvent[]> {
    return this.bounded(this.store.read(id, after, limit));
  }

  /**
   * Cancels a running stream and returns its final status. Idempotent and race-safe: the store
   * commits exactly one terminal event, so concurrent cancels (or a cancel racing completion) all
   * answer with the status that won.
   */
  async cancel(id: string): Promise<DurableStreamStatus | 'missing'> {
    const run = this.runs.get(id);
    let outcome: AppendOutcome | undefined;
    // Through an outage the producer stops at once and its `cancelled` is committed when the store is back.
    if (run) await this.bounded(run.stop('cancelled'));
    else outcome = await this.bounded(this.store.cancel(id, Date.now()));
    if (outcome && !outcome.ok) return outcome.status;
    const found = await this.bounded(this.store.lookup(id));
    return found.found === 'stream' ? found.record.status : 'missing';
  }
}
