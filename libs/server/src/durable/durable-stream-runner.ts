import { randomUUID } from 'node:crypto';
import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { isTerminalEvent, type DurableStartAnswer, type DurableStreamEvent, type DurableStreamStatus } from '@nest-jsonrpc/protocol';
import { callerUserId } from '../context/caller-identity.js';
import { RpcExceptionMapper } from '../errors/rpc-exception-mapper.js';
import { RpcRateLimitExceededException } from '../errors/rpc-exceptions.js';
import { JSON_RPC_MODULE_OPTIONS, type ResolvedJsonRpcOptions } from '../options/json-rpc-options.js';
import type { DurableCallStarter } from '../pipeline/durable-call-starter.js';
import { RpcPipeline, type RpcResolvedCall } from '../pipeline/rpc-pipeline.js';
import { assertRowSource, rowIteratorOf, stopRowIterator, unboxStreamSource } from '../pipeline/stream-source.js';
import { SqliteStreamStore } from '../stream-stores/sqlite-stream-store.js';
import type { AppendOutcome, StreamStore } from '../stream-stores/stream-store.js';
import { DurableEventIterator } from './durable-event-iterator.js';
import { durableLiveRows } from './durable-live-rows.js';
import { DurableRpcContext } from './durable-rpc-context.js';
import { DurableStreamRun } from './durable-stream-run.js';
import { DurableSubscription, type DurableEventSink } from './durable-subscription.js';

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

/**
 * Durable streams at runtime, in this process: starts producers (through the pipeline, so guards,
 * roles, limits, pipes and params run before anything is stored), enforces `maxRunning`, cancels,
 * recovers streams a dead process left running, sweeps expired ones, and stops everything cleanly
 * on shutdown. Owns the store's lifecycle. Inert while `durable.enabled` is false.
 */
@Injectable()
export class DurableStreamRunner implements DurableCallStarter, OnModuleInit, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger('JsonRpcDurable');
  private readonly runs = new Map<string, DurableStreamRun>();
  private storeRef: StreamStore | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;
  private offCancel: (() => void) | undefined;
  private shuttingDown = false;
  private readonly retentionMs: number;
  private readonly ownsStore: boolean;

  constructor(
    @Inject(JSON_RPC_MODULE_OPTIONS) private readonly options: ResolvedJsonRpcOptions,
    private readonly pipeline: RpcPipeline,
    private readonly mapper: RpcExceptionMapper,
  ) {
    this.retentionMs = options.durable.retention * 1000;
    this.ownsStore = options.durable.store === undefined;
  }

  get enabled(): boolean {
    return this.options.durable.enabled;
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

  async onModuleInit(): Promise<void> {
    if (!this.enabled) return;
    const store = this.options.durable.store ?? new SqliteStreamStore();
    await store.open();
    this.storeRef = store;
    this.offCancel = store.onCancel((id) => this.runs.get(id)?.abandon());
    const recovered = await store.recoverInterrupted(new Set(this.runs.keys()), Date.now());
    if (recovered.length) this.logger.warn(`Marked ${recovered.length} durable stream(s) left running by a previous process as interrupted`);
    const sweepEvery = Math.min(60_000, Math.max(250, Math.floor(this.retentionMs / 4)));
    this.sweepTimer = setInterval(() => void this.sweep(), sweepEvery);
    this.sweepTimer.unref();
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
      await Promise.all(runs.map((run) => run.stop('interrupted')));
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

  /** `POST <path>` on a durable method: start it and answer at once. */
  async start(call: RpcResolvedCall): Promise<DurableStartAnswer> {
    const run = await this.launch(call);
    return { stream_id: run.id, sse_url: `${this.options.durable.path}/${run.id}`, status: 'running' };
  }

  /**
   * `POST <stream.path>` on a durable method: start it, then follow it from its first event as
   * rows for the stream writer. Leaving early detaches without cancelling.
   */
  async startLive(call: RpcResolvedCall): Promise<{ streamId: string; rows: AsyncIterable<unknown> }> {
    const run = await this.launch(call);
    return { streamId: run.id, rows: durableLiveRows(this.follow(run.id, 0), call.definition.stream!.format) };
  }

  private async launch(call: RpcResolvedCall): Promise<DurableStreamRun> {
    const store = this.store;
    if (this.shuttingDown) throw new Error('durable stream refused: the server is shutting down');
    const { definition, ctx } = call;
    const id = randomUUID();
    const run = new DurableStreamRun(id, definition.name, store, this.mapper, this.logger, this.onRunReleased);
    const durableCall: RpcResolvedCall = { ...call, ctx: new DurableRpcContext(ctx, id, run.signal) };
    // Guards, pipes and params run here, so their errors answer the call instead of starting a
    // stream. The pipeline boxes a stream handler's value, so an Observable is not reduced to its
    // last value by Nest's chain. The stream is recorded (and its slot claimed) as the call's last
    // step: a value that is no stream, or a start over `maxRunning`, fails the call and leaves
    // nothing behind.
    const admit = async (value: unknown): Promise<unknown> => {
      const source = unboxStreamSource(value);
      assertRowSource(source);
      // The owner is known once the guards ran (an auth guard sets `request.user`).
      const owner = callerUserId(ctx.request, this.options.security.userIdResolver) ?? null;
      const created = await store.create({ id, method: definition.name, owner, createdAt: Date.now(), limits: this.options.durable.maxRunning });
      if (created.ok) return value;
      // Taking the iterator starts nothing (a generator runs on next()); return() lets it clean up.
      stopRowIterator(rowIteratorOf(source), () => undefined);
      throw new RpcRateLimitExceededException(
        created.scope === 'total'
          ? `Too many running durable streams: the limit is ${created.limit}`
          : `Too many running durable streams: the limit is ${created.limit} per user`,
        { data: { limit: created.limit } },
      );
    };
    const iterator = rowIteratorOf(unboxStreamSource(await this.pipeline.run(durableCall, admit)));
    this.runs.set(id, run);
    run.start(iterator);
    return run;
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

  /** Delivers a stream's committed events after `cursor` to `sink`, exactly once and in order. */
  subscribe(id: string, cursor: number, sink: DurableEventSink): DurableSubscription {
    const subscription = new DurableSubscription(this.store, id, cursor, sink);
    sink.bind(subscription);
    void subscription.start();
    return subscription;
  }

  /** Events with id > `after`, at most `limit`. */
  read(id: string, after: number, limit: number): Promise<DurableStreamEvent[]> {
    return this.store.read(id, after, limit);
  }

  /**
   * Cancels a running stream and returns its final status. Idempotent and race-safe: the store
   * commits exactly one terminal event, so concurrent cancels (or a cancel racing completion) all
   * answer with the status that won.
   */
  async cancel(id: string): Promise<DurableStreamStatus | 'missing'> {
    const run = this.runs.get(id);
    let outcome: AppendOutcome | undefined;
    if (run) await run.stop('cancelled');
    else outcome = await this.store.cancel(id, Date.now());
    if (outcome && !outcome.ok) return outcome.status;
    const found = await this.store.lookup(id);
    return found.found === 'stream' ? found.record.status : 'missing';
  }
}
