import { isObservable } from 'rxjs';
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { RpcContext } from '../dispatch/rpc-context.js';
import type { RpcMethodInvoker } from '../dispatch/rpc-method-invoker.js';
import { RpcExceptionMapper } from '../errors/exception-mapper.js';
import { RpcRateLimitExceededException } from '../errors/rpc-exceptions.js';
import { JSON_RPC_MODULE_OPTIONS, type ResolvedJsonRpcOptions } from '../json-rpc.options.js';
import type { RpcMethodDefinition } from '../registry/rpc-method-definition.js';
import type { RpcMethodRegistry } from '../registry/rpc-method-registry.js';
import type { DurableStreamEvent, DurableStreamRecord, DurableStreamStatus } from './durable-event.js';
import { DurableEventIterator } from './durable-event-iterator.js';
import { DurableRpcContext } from './durable-rpc-context.js';
import { DurableStreamRun } from './durable-stream-run.js';
import { DurableSubscription } from './durable-subscription.js';
import { SqliteStreamStore } from './sqlite-stream-store.js';
import { SseAttachments, type SseAttachment } from './sse-attachment.js';
import { callerRoles, callerUserId } from '../security/caller-identity.js';
import { RpcAccessRule } from '../security/rpc-access-rule.js';
import { durableLiveRows } from './durable-live-rows.js';
import { NotAStreamSourceError, unboxStreamSource } from '../streaming/stream-source.js';
import type { AppendOutcome, StreamStore } from './stream-store.js';

/** The answer of `POST /rpc` on a durable stream method. */
export interface DurableStartAnswer {
  stream_id: string;
  sse_url: string;
  status: 'running';
}

/** What the dispatcher calls instead of invoking a durable stream method. */
export interface DurableStreamStarter {
  /** `POST <path>`: start in the background, answer the start envelope. */
  start(invoker: RpcMethodInvoker, ctx: RpcContext): Promise<DurableStartAnswer>;
  /** `POST <stream.path>`: start, then serve the stream's committed events live as rows. */
  startLive(invoker: RpcMethodInvoker, ctx: RpcContext): Promise<{ streamId: string; rows: AsyncIterable<unknown> }>;
}

/** Who is asking, for ownership and role checks on the REST routes. */
export interface DurableCaller {
  /** `request.user.id` (else `.sub`) as a string; null when anonymous. */
  owner: string | null;
  roles: readonly string[];
}

export type DurableAccess =
  | { ok: true; record: DurableStreamRecord }
  | { ok: false; status: 404 | 410 | 403; message: string };


const LIST_LIMIT = 1000;


/**
 * Durable streams at runtime: starts producers, enforces `maxRunning`, answers ownership,
 * cancels, attaches subscribers, recovers streams a dead process left running, sweeps expired
 * ones, and stops everything cleanly on shutdown. Inert while `durable.enabled` is false.
 */
@Injectable()
export class DurableStreamService implements DurableStreamStarter, OnModuleInit, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger('JsonRpcDurable');
  private readonly mapper = new RpcExceptionMapper(this.logger);
  private readonly runs = new Map<string, DurableStreamRun>();
  /** Roles rule per protected method, for re-checking roles on every GET and DELETE. */
  private readonly accessRules = new Map<string, RpcAccessRule>();
  private storeRef: StreamStore | undefined;
  private registry: RpcMethodRegistry | undefined;
  private attachments: SseAttachments | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;
  private offCancel: (() => void) | undefined;
  private shuttingDown = false;
  private readonly retentionMs: number;
  private readonly ownsStore: boolean;

  constructor(@Inject(JSON_RPC_MODULE_OPTIONS) private readonly options: ResolvedJsonRpcOptions) {
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

  /** Streams this process is producing right now. */
  get runningHere(): number {
    return this.runs.size;
  }

  /** SSE responses attached to this process right now. */
  get attachedHere(): number {
    return this.attachments?.size ?? 0;
  }

  /** @internal called by JsonRpcServer once methods are explored. */
  useRegistry(registry: RpcMethodRegistry): void {
    this.registry = registry;
  }

  async onModuleInit(): Promise<void> {
    if (!this.enabled) return;
    const store = this.options.durable.store ?? new SqliteStreamStore();
    await store.open();
    this.storeRef = store;
    this.offCancel = store.onCancel((id) => this.runs.get(id)?.abandon());
    const recovered = await store.recoverInterrupted(new Set(this.runs.keys()), Date.now());
    if (recovered.length) this.logger.warn(`Marked ${recovered.length} durable stream(s) left running by a previous process as interrupted`);
    this.attachments = new SseAttachments(this.options.durable.keepAliveMs);
    const sweepEvery = Math.min(60_000, Math.max(250, Math.floor(this.retentionMs / 4)));
    this.sweepTimer = setInterval(() => void this.sweep(), sweepEvery);
    this.sweepTimer.unref();
  }

  /** Stop producing and detach every subscriber before the HTTP server closes (it would wait for them). */
  async beforeApplicationShutdown(): Promise<void> {
    if (!this.storeRef) return;
    this.shuttingDown = true;
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    this.sweepTimer = undefined;
    await Promise.all([...this.runs.values()].map((run) => run.stop('interrupted')));
    this.attachments?.close();
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

  // ---- starting -------------------------------------------------------------------------------

  /** `POST /rpc` on a durable method: start it and answer at once. */
  async start(invoker: RpcMethodInvoker, ctx: RpcContext): Promise<DurableStartAnswer> {
    const run = await this.launch(invoker, ctx);
    return { stream_id: run.id, sse_url: `${this.options.durable.path}/${run.id}`, status: 'running' };
  }

  /**
   * For the live `/rpc/stream` route: start the stream, then follow it from its first event. The
   * iterator yields committed events with their ids (for SSE `id:` fields) and ends after the
   * terminal one; leaving it early detaches without cancelling.
   */
  async startAndSubscribe(invoker: RpcMethodInvoker, ctx: RpcContext): Promise<{ streamId: string; events: AsyncIterableIterator<DurableStreamEvent> }> {
    const run = await this.launch(invoker, ctx);
    return { streamId: run.id, events: this.follow(run.id, 0) };
  }

  async startLive(invoker: RpcMethodInvoker, ctx: RpcContext): Promise<{ streamId: string; rows: AsyncIterable<unknown> }> {
    const { streamId, events } = await this.startAndSubscribe(invoker, ctx);
    return { streamId, rows: durableLiveRows(events, invoker.definition.stream!.format) };
  }

  private async launch(invoker: RpcMethodInvoker, ctx: RpcContext): Promise<DurableStreamRun> {
    const store = this.store;
    if (this.shuttingDown) throw new Error('durable stream refused: the server is shutting down');
    const definition = invoker.definition;
    const id = randomUUID();
    const run = new DurableStreamRun(id, definition.name, store, this.mapper, this.logger, this.onRunReleased);
    const durableCtx = new DurableRpcContext(ctx, id, run.signal);
    // Guards, pipes and params run here, so their errors answer the call instead of starting a
    // stream. The invoker boxes a stream handler's value, so an Observable is not reduced to its
    // last value by Nest's chain.
    const source = unboxStreamSource(await invoker.invoke(durableCtx));
    if (!isStreamSource(source)) throw new NotAStreamSourceError(source);
    const owner = callerUserId(ctx.request, this.options.security.userIdResolver) ?? null;
    const created = await store.create({ id, method: definition.name, owner, createdAt: Date.now(), limits: this.options.durable.maxRunning });
    if (!created.ok) {
      closeSource(source);
      throw new RpcRateLimitExceededException(
        created.scope === 'total'
          ? `Too many running durable streams: the limit is ${created.limit}`
          : `Too many running durable streams: the limit is ${created.limit} per user`,
        { data: { limit: created.limit } },
      );
    }
    this.runs.set(id, run);
    run.start(source);
    return run;
  }

  private readonly onRunReleased = (run: DurableStreamRun): void => {
    if (this.runs.get(run.id) === run) this.runs.delete(run.id);
  };

  // ---- the REST routes --------------------------------------------------------------------------

  /** The same identity the calls use: `security.userIdResolver` (else `user.id`, `sub`, `username`) and roles. */
  callerOf(request: FastifyRequest): DurableCaller {
    const { userIdResolver, rolesResolver } = this.options.security;
    return { owner: callerUserId(request, userIdResolver) ?? null, roles: callerRoles(request, rolesResolver) };
  }

  /**
   * Whether `caller` may see stream `id`: a stream of another user does not exist for them (404);
   * one deleted or past retention is 410; one whose method now needs roles the caller lacks is 403.
   */
  async access(id: string, caller: DurableCaller, now = Date.now()): Promise<DurableAccess> {
    const found = await this.store.lookup(id);
    if (found.found === 'none') return { ok: false, status: 404, message: 'Stream not found' };
    const owner = found.found === 'stream' ? found.record.owner : found.owner;
    if (owner !== null && owner !== caller.owner) return { ok: false, status: 404, message: 'Stream not found' };
    if (found.found === 'expired') return { ok: false, status: 410, message: 'Stream expired: past retention' };
    const record = found.record;
    if (record.completedAt !== null && record.completedAt + this.retentionMs <= now) {
      return { ok: false, status: 410, message: 'Stream expired: past retention' };
    }
    const definition = this.registry?.get(record.method);
    const denial = definition && this.roleDenial(definition, caller.roles);
    if (denial) return { ok: false, status: 403, message: denial };
    return { ok: true, record };
  }

  /** Why `have` may not touch a stream of `definition` (its effective roles), or undefined. */
  private roleDenial(definition: RpcMethodDefinition, have: readonly string[]): string | undefined {
    if (definition.roles.length === 0) return undefined;
    let rule = this.accessRules.get(definition.name);
    if (!rule) {
      rule = new RpcAccessRule(definition.roles, definition.rolesMatch, this.options.security.exposeRoleNames);
      this.accessRules.set(definition.name, rule);
    }
    return rule.denial(have);
  }

  /** The caller's streams, newest first; anonymous callers have none to list. */
  async list(caller: DurableCaller, status: DurableStreamStatus | undefined): Promise<DurableStreamRecord[]> {
    if (caller.owner === null) return [];
    const now = Date.now();
    const records = await this.store.list(caller.owner, status, LIST_LIMIT);
    return records.filter((r) => {
      if (r.completedAt !== null && r.completedAt + this.retentionMs <= now) return false;
      const definition = this.registry?.get(r.method);
      return !definition || this.roleDenial(definition, caller.roles) === undefined;
    });
  }

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

  /** Attaches an SSE response after `cursor` (the route has written the headers and `retry:`). */
  attachSse(res: ServerResponse, id: string, cursor: number): SseAttachment {
    const attachment = this.attachments!.open(res);
    const subscription = new DurableSubscription(this.store, id, cursor, {
      deliver: (events) => attachment.deliver(events),
      finish: (error) => {
        if (error !== undefined) this.logger.warn(`Attached SSE for durable stream ${id} ended early: ${error instanceof Error ? error.message : String(error)}`);
        attachment.finish(error);
      },
    });
    attachment.bind(subscription);
    void subscription.start();
    return attachment;
  }

  /** Follows a stream after `cursor` as an async iterator. */
  follow(id: string, cursor: number): DurableEventIterator {
    const iterator = new DurableEventIterator();
    const subscription = new DurableSubscription(this.store, id, cursor, iterator);
    iterator.bind(subscription);
    void subscription.start();
    return iterator;
  }
}

/** What `rowIteratorOf` accepts: an AsyncIterable, an Iterable (not a string) or an Observable. */
function isStreamSource(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  return (
    typeof (value as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function' ||
    typeof (value as Iterable<unknown>)[Symbol.iterator] === 'function' ||
    isObservable(value)
  );
}

function closeSource(source: unknown): void {
  const s = source as { return?: () => unknown };
  try {
    if (typeof s.return === 'function') void Promise.resolve(s.return()).catch(() => undefined);
  } catch {
    // nothing to clean up
  }
}
