import { errorJsonOfErrorRow, isTerminalEvent, RpcErrorCode, type DurableStreamEvent, type RpcErrorObject, type RpcId, type RpcParamsValue } from '@nest-jsonrpc/protocol';
import type { RpcHttpExchange } from '../../context/rpc-context.js';
import type { DurableStreamAccess } from '../../durable/durable-stream-access.js';
import type { DurableStreamRunner } from '../../durable/durable-stream-runner.js';
import type { ResolvedJsonRpcOptions } from '../../options/json-rpc-options.js';
import type { RpcPipeline } from '../../pipeline/rpc-pipeline.js';
import type { DurableStreamRecord } from '../../stream-stores/stream-store.js';
import type { McpToolCatalog, McpToolEntry } from '../mcp-tool-catalog.js';
import { McpRowAggregate, type McpToolOutcome, type McpToolResult, type McpToolRunner } from '../mcp-tool-runner.js';

/** A task's status, in both wire eras' words (`running` is `working`). */
export type McpTaskStatus = 'working' | 'completed' | 'failed' | 'cancelled';

/** A task as both eras describe it; each era's wire names its fields its own way. */
export interface McpTaskView {
  /** The durable stream's id. */
  readonly taskId: string;
  readonly status: McpTaskStatus;
  /** The text of the last `progress()` row while working. */
  readonly statusMessage?: string;
  /** ISO 8601. */
  readonly createdAt: string;
  /**
   * ISO 8601: when it finished; while it works, when its last events were committed (a progress
   * row, a row of output), or its creation before the first.
   */
  readonly lastUpdatedAt: string;
  /** How long after creation the task can be read: until it ends plus `durable.retention` (a lower bound while working). */
  readonly ttlMs: number;
  readonly pollIntervalMs: number;
}

/** How a finished task ended. */
export type McpTaskEnd =
  /** What a direct call would have answered — an `isError` tool result included. */
  | { readonly status: 'completed'; readonly result: McpToolResult }
  /** The server failed the call (-32603: an exception that is no RPC error, or an interrupted stream). */
  | { readonly status: 'failed'; readonly error: RpcErrorObject }
  | { readonly status: 'cancelled' };

export type McpTaskLookup =
  | { readonly found: true; readonly task: McpTaskView; readonly end?: McpTaskEnd }
  /** Unknown, another caller's, not a tool's, roles lacking, or (for its owner) expired: `message` says which of the last two only to the owner. */
  | { readonly found: false; readonly message: string };

export type McpTaskStart =
  | { readonly started: true; readonly task: McpTaskView }
  /** Refused before a task existed (guards, params, `durable.maxRunning`): what a direct call would have answered. */
  | { readonly started: false; readonly outcome: McpToolOutcome };

export const TASK_NOT_FOUND = 'Failed to retrieve task: Task not found';
export const TASK_EXPIRED = 'Failed to retrieve task: Task has expired';

const STATUS_OF: Readonly<Record<DurableStreamRecord['status'], McpTaskStatus>> = {
  running: 'working',
  completed: 'completed',
  failed: 'failed',
  cancelled: 'cancelled',
};

/** Events read per page when a finished task's result is assembled. */
const READ_PAGE = 1000;
/** The most recent events searched for the last progress row (polls stay cheap however long the stream). */
const PROGRESS_WINDOW = 64;
const MAX_STATUS_MESSAGE = 500;

/**
 * MCP tasks on durable streams: a task IS a durable stream (task id = stream id), so it is
 * stored where the app keeps durable streams (SQLite, Redis), visible from every instance that
 * shares the store, cancellable from any of them, and marked failed (-32603 `Stream interrupted`)
 * when the process producing it died. Everything goes through the durable runner's surface —
 * start, lookup (with `DurableStreamAccess`'s ownership and roles rules), read, follow, cancel.
 * Both wire eras (the 2026-07-28 Tasks extension and 2025-11-25 tasks) render these views.
 */
export class McpTasks {
  private readonly retentionMs: number;
  private readonly pollIntervalMs: number;

  constructor(
    private readonly durable: DurableStreamRunner,
    private readonly access: DurableStreamAccess,
    private readonly pipeline: RpcPipeline,
    private readonly catalog: McpToolCatalog,
    private readonly tools: McpToolRunner,
    private readonly options: Pick<ResolvedJsonRpcOptions, 'mcp' | 'durable'>,
  ) {
    this.retentionMs = options.durable.retention * 1000;
    this.pollIntervalMs = options.mcp.tasks.pollIntervalMs;
  }

  /**
   * Starts a call of `entry` as a task. A stream method runs its guards, pipes and params first
   * (their refusal answers the call, no task is left); a plain method is recorded first and runs
   * whole in the background. Answers once the task can be read (the store committed it).
   */
  async start(entry: McpToolEntry, args: unknown, exchange: RpcHttpExchange, id: RpcId): Promise<McpTaskStart> {
    const method = entry.definition.name;
    const call = this.pipeline.callOf(method, args as RpcParamsValue | undefined, exchange, 'mcp', { id });
    if (!call) return { started: false, outcome: { result: this.tools.failure({ code: RpcErrorCode.MethodNotFound, message: 'Method not found' }) } };
    let taskId: string;
    try {
      const answer = entry.definition.stream ? await this.durable.start(call) : await this.durable.startDeferred(call);
      taskId = answer.stream_id;
    } catch (error) {
      return { started: false, outcome: this.tools.refusal(error, method) };
    }
    const lookup = await this.get(taskId, exchange, false);
    // The creator may always read what it just created; only a retention of 0 could say otherwise.
    if (!lookup.found) throw new Error(`MCP task ${taskId} could not be read back after it was created`);
    return { started: true, task: lookup.task };
  }

  /** A task as its caller may see it; `withEnd` also assembles a finished task's result. */
  async get(taskId: unknown, exchange: RpcHttpExchange, withEnd: boolean): Promise<McpTaskLookup> {
    const found = await this.recordOf(taskId, exchange);
    if (!found.ok) return found.lookup;
    const { record, entry } = found;
    const task = await this.viewOf(record);
    if (!withEnd || record.status === 'running') return { found: true, task };
    return { found: true, task, end: await this.endOf(entry, this.pages(record.id)) };
  }

  /**
   * Cancels a working task (the durable `DELETE`): idempotent — a finished task stays as it
   * ended, and the view tells how.
   */
  async cancel(taskId: unknown, exchange: RpcHttpExchange): Promise<McpTaskLookup & { readonly wasWorking?: boolean }> {
    const found = await this.recordOf(taskId, exchange);
    if (!found.ok) return found.lookup;
    const wasWorking = found.record.status === 'running';
    if (wasWorking) await this.durable.cancel(found.record.id);
    const after = await this.get(found.record.id, exchange, false);
    return after.found ? { ...after, wasWorking } : after;
  }

  /**
   * Waits for the task to finish and answers how it ended (2025-11-25 `tasks/result` blocks so).
   * A caller that leaves stops the wait, never the task.
   */
  async result(taskId: unknown, exchange: RpcHttpExchange): Promise<McpTaskLookup> {
    const found = await this.recordOf(taskId, exchange);
    if (!found.ok) return found.lookup;
    const events = this.durable.follow(found.record.id, 0);
    const leave = () => void events.return();
    exchange.signal.addEventListener('abort', leave, { once: true });
    try {
      const end = await this.endOf(found.entry, events);
      exchange.signal.throwIfAborted();
      const lookup = await this.get(found.record.id, exchange, false);
      return lookup.found ? { ...lookup, end } : lookup;
    } finally {
      exchange.signal.removeEventListener('abort', leave);
    }
  }

  private async recordOf(
    taskId: unknown,
    exchange: RpcHttpExchange,
  ): Promise<{ ok: true; record: DurableStreamRecord; entry: McpToolEntry } | { ok: false; lookup: McpTaskLookup }> {
    const notFound = { ok: false as const, lookup: { found: false as const, message: TASK_NOT_FOUND } };
    if (typeof taskId !== 'string' || taskId.length === 0 || taskId.length > 200) return notFound;
    const access = await this.access.access(taskId, this.access.callerOf(exchange.request));
    if (!access.ok) return access.status === 410 ? { ok: false, lookup: { found: false, message: TASK_EXPIRED } } : notFound;
    // Only a tool's durable stream is a task; a durable method no tool exposes is not one.
    const entry = this.catalog.ofMethod(access.record.method);
    return entry ? { ok: true, record: access.record, entry } : notFound;
  }

  private async viewOf(record: DurableStreamRecord): Promise<McpTaskView> {
    const end = record.completedAt ?? Date.now();
    const statusMessage = record.status === 'running' ? await this.progressMessage(record) : undefined;
    return {
      taskId: record.id,
      status: await this.statusOf(record),
      ...(statusMessage !== undefined && { statusMessage }),
      createdAt: new Date(record.createdAt).toISOString(),
      lastUpdatedAt: new Date(lastUpdateOf(record)).toISOString(),
      ttlMs: Math.max(1, end - record.createdAt + this.retentionMs),
      pollIntervalMs: this.pollIntervalMs,
    };
  }

  /**
   * The task's status. A stream that ended with an error is `failed` only when the server failed
   * (-32603); the tool's own error is a result (`completed`, `isError`), as a direct call answers it.
   */
  private async statusOf(record: DurableStreamRecord): Promise<McpTaskStatus> {
    if (record.status !== 'failed') return STATUS_OF[record.status];
    const [last] = await this.durable.read(record.id, record.events - 1, 1);
    return last?.event === 'error' && errorObjectOf(last.data).code !== RpcErrorCode.InternalError ? 'completed' : 'failed';
  }

  /** The text of the last `progress()` row among the most recent events. */
  private async progressMessage(record: DurableStreamRecord): Promise<string | undefined> {
    if (record.events === 0) return undefined;
    const recent = await this.durable.read(record.id, Math.max(0, record.events - PROGRESS_WINDOW), PROGRESS_WINDOW);
    for (let i = recent.length - 1; i >= 0; i--) {
      if (recent[i].event === 'progress') return progressText(JSON.parse(recent[i].data));
    }
    return undefined;
  }

  /** Every stored event of a finished stream, page by page. */
  private async *pages(id: string): AsyncGenerator<DurableStreamEvent> {
    let after = 0;
    for (;;) {
      const page = await this.durable.read(id, after, READ_PAGE);
      for (const event of page) yield event;
      if (page.length < READ_PAGE) return;
      after = page[page.length - 1].id;
    }
  }

  /** How a stream's events end, as what a direct call of `entry` would have answered. */
  private async endOf(entry: McpToolEntry, events: AsyncIterable<DurableStreamEvent>): Promise<McpTaskEnd> {
    const format = entry.format ?? this.options.mcp.defaultFormat;
    const aggregate = new McpRowAggregate();
    let first: unknown;
    for await (const event of events) {
      if (event.event === 'chunk') {
        const row: unknown = JSON.parse(event.data);
        if (aggregate.count === 0) first = row;
        aggregate.add(row);
        continue;
      }
      if (!isTerminalEvent(event.event)) continue;
      if (event.event === 'cancelled') return { status: 'cancelled' };
      if (event.event === 'done') {
        // A plain method's task has one row: its value. A stream's rows aggregate as a direct call's do.
        return { status: 'completed', result: this.tools.success(entry, entry.definition.stream ? aggregate.value : (first ?? null), format) };
      }
      const error = errorObjectOf(event.data);
      // -32603 is the server failing (an exception that is no RPC error, an interrupted run); any
      // other code is the tool's own error, which a direct call answers as an isError result.
      return error.code === RpcErrorCode.InternalError ? { status: 'failed', error } : { status: 'completed', result: this.tools.failure(error) };
    }
    // The events ended without a terminal one: a caller that left (the task itself goes on).
    return { status: 'failed', error: { code: RpcErrorCode.InternalError, message: 'Internal error' } };
  }
}

/**
 * When the task last changed: its end, else its last commit (kept on the record the lookup
 * already read, so a poll costs no further read). Never before its creation: on Redis the
 * instance that commits may not be the one that created it, and their clocks may disagree.
 */
function lastUpdateOf(record: DurableStreamRecord): number {
  return Math.max(record.createdAt, record.completedAt ?? record.updatedAt ?? record.createdAt);
}

function errorObjectOf(data: string): RpcErrorObject {
  const json = errorJsonOfErrorRow(data);
  const parsed: unknown = json === undefined ? undefined : JSON.parse(json);
  if (parsed !== null && typeof parsed === 'object' && typeof (parsed as RpcErrorObject).code === 'number' && typeof (parsed as RpcErrorObject).message === 'string') {
    return parsed as RpcErrorObject;
  }
  return { code: RpcErrorCode.InternalError, message: 'Internal error' };
}

/** A progress row as a status message: a string as is, `{ message }` its message, anything else its JSON. */
function progressText(value: unknown): string {
  const text =
    typeof value === 'string'
      ? value
      : value !== null && typeof value === 'object' && typeof (value as { message?: unknown }).message === 'string'
        ? (value as { message: string }).message
        : JSON.stringify(value);
  return text.length > MAX_STATUS_MESSAGE ? `${text.slice(0, MAX_STATUS_MESSAGE)}…` : text;
}
