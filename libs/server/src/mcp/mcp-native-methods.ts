import {
  classifyInboundRequest,
  CLIENT_CAPABILITIES_META_KEY,
  isJsonContentType,
  MissingRequiredClientCapabilityError,
  PROTOCOL_VERSION_META_KEY,
  RELATED_TASK_META_KEY,
  SERVER_INFO_META_KEY,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/server';
import { RpcErrorCode, type RpcErrorObject, type RpcId } from '@nest-jsonrpc/protocol';
import type { RpcHttpExchange } from '../context/rpc-context.js';
import { requestUser } from '../context/caller-identity.js';
import { singleValue } from '../context/single-value.js';
import type { ResolvedMcpOptions } from '../options/mcp-options.js';
import type { BearerChallenge } from './auth/bearer-challenge.js';
import type { McpResourceServer } from './auth/mcp-resource-server.js';
import type { McpInFlightRequests } from './mcp-in-flight-requests.js';
import type { McpToolCatalog, McpToolDescription, McpToolEntry } from './mcp-tool-catalog.js';
import type { McpToolOutcome, McpToolRunner } from './mcp-tool-runner.js';
import type { McpTaskEnd, McpTasks, McpTaskView } from './tasks/mcp-tasks.js';

/** The revision answered natively besides the 2025 era (the SDK classifies; this is what it names). */
export const MODERN_PROTOCOL_VERSION = '2026-07-28';
/** The Tasks extension's identifier (2026-07-28). */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
/**
 * How long a client may cache `tools/list` (SEP-2549 `ttlMs`). The tool set is built once at
 * startup and cannot change while the process runs (no `list_changed`), so only a deploy changes
 * it: five minutes bounds how long a client keeps an old list after one.
 */
export const TOOLS_LIST_TTL_MS = 300_000;

/** `modern`: the 2026-07-28 wire (per-request envelopes); `legacy`: the 2025 revisions (the `initialize` handshake). */
export type McpEra = 'modern' | 'legacy';

/** One request this path answers. */
export interface McpNativeCall {
  readonly era: McpEra;
  readonly id: RpcId;
  readonly method: string;
  readonly params: Readonly<Record<string, unknown>>;
  /** Modern era: the request declared the Tasks extension in its client capabilities. */
  readonly declaresTasks: boolean;
}

/** A JSON-RPC answer and how it travels. */
export interface McpNativeAnswer {
  readonly status: number;
  readonly message: { jsonrpc: '2.0'; id: RpcId; result: Record<string, unknown> } | { jsonrpc: '2.0'; id: RpcId; error: RpcErrorObject };
  /** A Bearer challenge (`mcp.auth`). */
  readonly wwwAuthenticate?: string;
}

/**
 * The answer to a request its client cancelled (`notifications/cancelled`): no JSON-RPC response
 * at all, as MCP asks; the route ends the HTTP answer as an empty event stream.
 */
export const CANCELLED_REQUEST: unique symbol = Symbol('cancelled MCP request');

/** What a request looks like to this path: lower-case header names, the parsed body. */
export interface McpInboundRequest {
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: unknown;
}

const TOOLS = new Set(['tools/list', 'tools/call']);
/** The members of a JSON-RPC request: the SDK's schema refuses any other. */
const REQUEST_MEMBERS = new Set(['jsonrpc', 'id', 'method', 'params']);
/** Distinct envelopes remembered at most (clients send a handful; a flood of invented ones only costs the SDK's check). */
const MAX_REMEMBERED_ENVELOPES = 1000;
const TASKS_BOTH = new Set(['tasks/get', 'tasks/cancel']);
const TASKS_MODERN = new Set(['tasks/update']);
const TASKS_LEGACY = new Set(['tasks/result']);
/** The body field `Mcp-Name` mirrors (SEP-2243, SEP-2663). */
const NAME_FIELD: Readonly<Record<string, string>> = { 'tools/call': 'name', 'tasks/get': 'taskId', 'tasks/update': 'taskId', 'tasks/cancel': 'taskId' };
/** `Mcp-Name` carrying a non-ASCII value, Base64 encoded: decoding it is the SDK's job. */
const ENCODED_NAME = '=?base64?';

/**
 * The stateless methods answered without an SDK server: `tools/list`, `tools/call`, `ping` and
 * the tasks methods, for both eras. The 2026-07-28 wire is stateless JSON-RPC over HTTP and this
 * module is a JSON-RPC engine; building an SDK server, a web `Request`, a transport and a web
 * `Response` per call is what made a tool call cost ~1 ms of CPU.
 *
 * The SDK still decides everything it owns: `accept` takes a request only when it can prove the
 * SDK would serve it untouched — the request shape the SDK's schema holds requests to, every
 * standard header present and equal to the body, a 2026 envelope the SDK's own classifier
 * accepted, a JSON content type, well-formed params, no progress token unless the answer comes at
 * once (the tasks methods, a `tools/call` that creates a task: a progress token must not cost a
 * task its creation). Anything else — `initialize`, `server/discover`, notifications, batches,
 * direct calls with progress (answered as SSE), malformed or mismatched input — goes to the SDK, which owns those answers. Results are stamped as the SDK's 2026 codec stamps them
 * (`resultType`, `_meta` server identity, `ttlMs`/`cacheScope` on `tools/list`).
 * `test/mcp/native-methods.e2e-spec.ts` sends each kind of request down both paths and requires
 * the same answers.
 */
export class McpNativeMethods {
  private readonly serverInfo: { readonly name: string; readonly version: string };
  /** 2026-07-28 envelopes the SDK accepted, as JSON text. */
  private readonly acceptedEnvelopes = new Set<string>();
  /** 2025-era lists with `execution.taskSupport`, per list the catalog hands out. */
  private readonly legacyLists = new WeakMap<readonly McpToolDescription[], readonly McpToolDescription[]>();

  constructor(
    private readonly catalog: McpToolCatalog,
    private readonly runner: McpToolRunner,
    private readonly tasks: McpTasks | undefined,
    private readonly resourceServer: McpResourceServer | undefined,
    private readonly options: ResolvedMcpOptions,
    /** Where the requests a client may cancel are registered while they run. */
    private readonly inFlight: McpInFlightRequests,
  ) {
    this.serverInfo = Object.freeze({ name: options.name, version: options.version });
  }

  /**
   * The call when this path may answer the request exactly as the SDK would; undefined otherwise.
   *
   * What the SDK's `classifyInboundRequest` checks is checked here positively, cheaply: the
   * JSON-RPC request shape its schema holds requests to (no other top-level member, an integer or
   * string id, params an object, `_meta` without a related task and any progress token a string
   * or an integer — a token only on a request answered at once, `answersAtOnce`), and for the
   * 2025 era that nothing claims the 2026 one — which is all its legacy verdict rests on. What is
   * costly to re-check, a 2026-07-28 `_meta` envelope, is left to the SDK itself: the first time
   * an envelope is seen the request goes through its classifier, and an envelope it accepted is
   * remembered (a client sends the same one with every request; its progress token aside), bounded.
   */
  accept(request: McpInboundRequest): McpNativeCall | undefined {
    const body = request.body;
    if (!isPlainObject(body)) return undefined;
    for (const key in body) if (!REQUEST_MEMBERS.has(key)) return undefined;
    const { jsonrpc, id, method, params = {} } = body as { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown };
    if (jsonrpc !== '2.0' || typeof method !== 'string' || !(typeof id === 'string' || Number.isSafeInteger(id))) return undefined;
    if (!isPlainObject(params)) return undefined;
    const meta = params._meta;
    if (meta !== undefined && (!isPlainObject(meta) || Object.hasOwn(meta, RELATED_TASK_META_KEY))) return undefined;
    const token = meta?.progressToken;
    if (token !== undefined && !(typeof token === 'string' || Number.isSafeInteger(token))) return undefined;
    const headers = request.headers;
    if (!isJsonContentType(singleValue(headers['content-type']))) return undefined;
    const modern = meta !== undefined && Object.hasOwn(meta, PROTOCOL_VERSION_META_KEY);
    const era: McpEra = modern ? 'modern' : 'legacy';
    if (!this.answers(method, era) || !wellFormed(method, params)) return undefined;
    const version = trimmed(headers['mcp-protocol-version']);
    if (modern) {
      if (version !== MODERN_PROTOCOL_VERSION || trimmed(headers['mcp-method']) !== method) return undefined;
      const nameField = NAME_FIELD[method];
      if (nameField !== undefined) {
        const name = trimmed(headers['mcp-name']);
        if (name === undefined || name.startsWith(ENCODED_NAME) || name !== params[nameField]) return undefined;
      }
      if (!this.envelopeAccepted(meta as Record<string, unknown>, request, version)) return undefined;
      const capabilities = (meta as Record<string, unknown>)[CLIENT_CAPABILITIES_META_KEY];
      const extensions = isPlainObject(capabilities) ? capabilities.extensions : undefined;
      const call = { era, id: id as RpcId, method, params, declaresTasks: isPlainObject(extensions) && extensions[TASKS_EXTENSION] !== undefined };
      return token === undefined || this.answersAtOnce(call) ? call : undefined;
    }
    // The 2025 era: what the SDK's stateless transport accepts untouched (it answers 406 otherwise).
    const accept = singleValue(headers.accept);
    if (accept === undefined || !accept.includes('application/json') || !accept.includes('text/event-stream')) return undefined;
    if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return undefined;
    const call = { era, id: id as RpcId, method, params, declaresTasks: false };
    return token === undefined || this.answersAtOnce(call) ? call : undefined;
  }

  /**
   * Whether a request carrying a progress token is still this path's: one whose answer comes at
   * once, with no progress to stream — a tasks method, or a `tools/call` that creates a task (or
   * is refused one: the task rules answer the same with or without a token). A progress token
   * changes nothing about a task: the task is created and answered at once, and its progress is
   * read with `tasks/get` (`statusMessage`). Only a direct call with progress goes to the SDK,
   * whose answer streams one notification per row.
   */
  private answersAtOnce(call: McpNativeCall): boolean {
    if (call.method !== 'tools/call') return call.method.startsWith('tasks/');
    const entry = this.catalog.named(call.params.name as string);
    return entry !== undefined && this.taskDecision(call, entry, call.params.task !== undefined) !== false;
  }

  /** Whether the SDK accepts this 2026-07-28 envelope (asked once per distinct envelope). */
  private envelopeAccepted(meta: Record<string, unknown>, request: McpInboundRequest, version: string): boolean {
    // Keyed without the progress token: a client sends a fresh one with every request that carries one.
    const { progressToken: _token, ...envelope } = meta;
    const key = JSON.stringify(envelope);
    if (this.acceptedEnvelopes.has(key)) return true;
    const headers = request.headers;
    const route = classifyInboundRequest({ httpMethod: 'POST', protocolVersionHeader: version, mcpMethodHeader: trimmed(headers['mcp-method']), mcpNameHeader: trimmed(headers['mcp-name']), body: request.body });
    if (route.kind !== 'modern' || route.messageKind !== 'request' || route.classification.revision !== MODERN_PROTOCOL_VERSION) return false;
    if (this.acceptedEnvelopes.size >= MAX_REMEMBERED_ENVELOPES) this.acceptedEnvelopes.clear();
    this.acceptedEnvelopes.add(key);
    return true;
  }

  /** The answer to an accepted call; `CANCELLED_REQUEST` when its client cancelled it. */
  async answer(call: McpNativeCall, exchange: RpcHttpExchange): Promise<McpNativeAnswer | typeof CANCELLED_REQUEST> {
    switch (call.method) {
      case 'ping':
        return this.result(call, {});
      case 'tools/list':
        return this.listTools(call, exchange);
      case 'tools/call':
        return this.callTool(call, exchange);
      default:
        return this.taskMethod(call, exchange);
    }
  }

  private answers(method: string, era: McpEra): boolean {
    if (TOOLS.has(method)) return true;
    if (method === 'ping') return era === 'legacy';
    if (!this.tasks) return false;
    return TASKS_BOTH.has(method) || (era === 'modern' ? TASKS_MODERN : TASKS_LEGACY).has(method);
  }

  /** Whether tools may run as tasks (durable streams are on). */
  get servesTasks(): boolean {
    return this.tasks !== undefined;
  }

  /**
   * The `tools/list` result for a caller with `roles`: 2025-11-25 says which tools run as tasks
   * (`execution.taskSupport`); 2026-07-28 carries the cache hints (SEP-2549), private when the
   * list depends on the caller.
   */
  toolList(era: McpEra, roles: readonly string[]): Record<string, unknown> {
    const tools = this.catalog.list(roles);
    if (era === 'legacy') return { tools: this.tasks ? this.withTaskSupport(tools) : tools };
    return { tools, ttlMs: TOOLS_LIST_TTL_MS, cacheScope: this.catalog.perCaller ? 'private' : 'public' };
  }

  private listTools(call: McpNativeCall, exchange: RpcHttpExchange): McpNativeAnswer {
    return this.result(call, this.toolList(call.era, exchange.roles));
  }

  /** 2025-11-25 lists say which tools run as tasks (`execution.taskSupport`); 2026-07-28 dropped the field. */
  private withTaskSupport(tools: readonly McpToolDescription[]): readonly McpToolDescription[] {
    let listed = this.legacyLists.get(tools);
    if (!listed) {
      listed = Object.freeze(
        tools.map((tool) => {
          const task = this.catalog.named(tool.name)?.task;
          return task && task !== 'forbidden' ? Object.freeze({ ...tool, execution: Object.freeze({ taskSupport: task }) }) : tool;
        }),
      );
      this.legacyLists.set(tools, listed);
    }
    return listed;
  }

  private async callTool(call: McpNativeCall, exchange: RpcHttpExchange): Promise<McpNativeAnswer | typeof CANCELLED_REQUEST> {
    const { name, arguments: args, task } = call.params as { name: string; arguments?: unknown; task?: unknown };
    const roles = exchange.roles;
    const entry = this.catalog.find(name, roles);
    // Unknown, hidden and (without mcp.auth) role-denied tools alike: the caller learns nothing more.
    if (!entry) return this.error(call, { code: RpcErrorCode.InvalidParams, message: `Unknown tool: ${name}` });
    const authenticated = requestUser(exchange.request) !== undefined;
    const before = this.resourceServer?.challengeBefore(entry.access, roles, authenticated);
    if (before) return this.challenge(call, before);
    const asTask = this.taskDecision(call, entry, task !== undefined);
    if (typeof asTask === 'object') return asTask;
    if (asTask) {
      const started = await this.tasks!.start(entry, args, exchange, call.id);
      if (started.started) return this.result(call, call.era === 'modern' ? { resultType: 'task', ...taskFields(started.task, 'modern') } : { task: taskFields(started.task, 'legacy') });
      return this.toolAnswer(call, entry, started.outcome, authenticated);
    }
    // A task is cancelled with tasks/cancel, never notifications/cancelled: only a direct call is registered.
    const format = entry.format ?? this.options.defaultFormat;
    const request = this.inFlight.begin(exchange, call.id);
    try {
      const outcome = await this.runner.run(entry, args, exchange, { format, id: call.id });
      return request.cancelled ? CANCELLED_REQUEST : this.toolAnswer(call, entry, outcome, authenticated);
    } finally {
      request.end();
    }
  }

  /**
   * Whether the call runs as a task, or the error refusing it. 2026-07-28: the server decides,
   * for clients that declared the Tasks extension on the request; a tool that needs a task
   * refuses the others with -32021. 2025-11-25: the client asks with `task`; a tool that cannot
   * run as one, or needs one and was not asked, answers -32601 (that revision's rule).
   */
  private taskDecision(call: McpNativeCall, entry: McpToolEntry, askedForTask: boolean): boolean | McpNativeAnswer {
    const support = this.tasks ? entry.task : 'forbidden';
    if (call.era === 'modern') {
      if (support === 'required' && !call.declaresTasks) {
        const missing = new MissingRequiredClientCapabilityError({ requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } });
        return this.error(call, { code: missing.code, message: missing.message, data: missing.data }, 400);
      }
      return support !== 'forbidden' && call.declaresTasks;
    }
    if (askedForTask && support === 'forbidden') return this.error(call, { code: RpcErrorCode.MethodNotFound, message: `Tool ${entry.tool.name} does not support task-augmented execution` });
    if (!askedForTask && support === 'required') return this.error(call, { code: RpcErrorCode.MethodNotFound, message: `Tool ${entry.tool.name} must be called as a task` });
    return askedForTask;
  }

  /** A tool result, or the challenge a refusal of the caller turns into (`mcp.auth`). */
  private toolAnswer(call: McpNativeCall, entry: McpToolEntry, outcome: McpToolOutcome, authenticated: boolean): McpNativeAnswer {
    if (outcome.denial && this.resourceServer) {
      const challenge = this.resourceServer.challengeAfter(outcome.denial, entry.access, authenticated);
      if (challenge) return this.challenge(call, challenge);
    }
    return this.result(call, outcome.result);
  }

  private async taskMethod(call: McpNativeCall, exchange: RpcHttpExchange): Promise<McpNativeAnswer | typeof CANCELLED_REQUEST> {
    const tasks = this.tasks!;
    if (call.era === 'modern' && !call.declaresTasks) {
      const missing = new MissingRequiredClientCapabilityError({ requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } });
      return this.error(call, { code: missing.code, message: missing.message, data: missing.data }, 400);
    }
    const taskId = call.params.taskId;
    switch (call.method) {
      case 'tasks/get': {
        const lookup = await tasks.get(taskId, exchange, call.era === 'modern');
        if (!lookup.found) return this.notFound(call, lookup.message);
        const fields = taskFields(lookup.task, call.era);
        return this.result(call, call.era === 'modern' ? { ...fields, ...endFields(lookup.end) } : fields);
      }
      case 'tasks/update': {
        // No task of this module waits for input, so no response is outstanding: acknowledged and ignored (SEP-2663).
        const lookup = await tasks.get(taskId, exchange, false);
        return lookup.found ? this.result(call, {}) : this.notFound(call, lookup.message);
      }
      case 'tasks/cancel': {
        const cancelled = await tasks.cancel(taskId, exchange);
        if (!cancelled.found) return this.notFound(call, cancelled.message);
        if (call.era === 'modern') return this.result(call, {});
        // 2025-11-25: cancelling a finished task is refused; the answer is the task, cancelled.
        if (!cancelled.wasWorking) return this.error(call, { code: RpcErrorCode.InvalidParams, message: `Cannot cancel task: already in terminal status '${cancelled.task.status}'` });
        return this.result(call, taskFields(cancelled.task, 'legacy'));
      }
      default: {
        // tasks/result (2025-11-25): blocks until the task ends, then answers what the call would have.
        // Its client may cancel the wait (notifications/cancelled); the task itself goes on.
        const request = this.inFlight.begin(exchange, call.id);
        let lookup: Awaited<ReturnType<McpTasks['result']>>;
        try {
          lookup = await tasks.result(taskId, exchange);
        } catch (error) {
          if (request.cancelled) return CANCELLED_REQUEST;
          throw error;
        } finally {
          request.end();
        }
        if (request.cancelled) return CANCELLED_REQUEST;
        if (!lookup.found) return this.notFound(call, lookup.message);
        const end = lookup.end!;
        if (end.status === 'failed') return this.error(call, end.error);
        if (end.status === 'cancelled') return this.error(call, { code: RpcErrorCode.InvalidParams, message: 'Task was cancelled: it has no result' });
        return this.result(call, { ...end.result, _meta: { ...end.result._meta, [RELATED_TASK_META_KEY]: { taskId: lookup.task.taskId } } });
      }
    }
  }

  private notFound(call: McpNativeCall, message: string): McpNativeAnswer {
    return this.error(call, { code: RpcErrorCode.InvalidParams, message });
  }

  /** A result as the SDK's codec writes it for the era: 2026 stamps `resultType` (unless set) and the server identity. */
  private result(call: McpNativeCall, result: Record<string, unknown>): McpNativeAnswer {
    if (call.era === 'legacy') return { status: 200, message: { jsonrpc: '2.0', id: call.id, result } };
    const meta = result._meta as Record<string, unknown> | undefined;
    const stamped = { resultType: 'complete', ...result, _meta: { [SERVER_INFO_META_KEY]: this.serverInfo, ...meta } };
    return { status: 200, message: { jsonrpc: '2.0', id: call.id, result: stamped } };
  }

  /** An in-band JSON-RPC error: HTTP 200, except what the 2026 wire sends as 400 (-32021). */
  private error(call: McpNativeCall, error: RpcErrorObject, modernStatus = 200): McpNativeAnswer {
    return { status: call.era === 'modern' ? modernStatus : 200, message: { jsonrpc: '2.0', id: call.id, error } };
  }

  private challenge(call: McpNativeCall, challenge: BearerChallenge): McpNativeAnswer {
    return { status: challenge.status, message: { jsonrpc: '2.0', id: call.id, error: challenge.error }, wwwAuthenticate: challenge.wwwAuthenticate };
  }
}

/** A task's fields in the era's words: 2025-11-25 says `ttl` and `pollInterval`, 2026-07-28 `ttlMs` and `pollIntervalMs`. */
function taskFields(task: McpTaskView, era: McpEra): Record<string, unknown> {
  const { ttlMs, pollIntervalMs, ...rest } = task;
  return era === 'modern' ? { ...rest, ttlMs, pollIntervalMs } : { ...rest, ttl: ttlMs, pollInterval: pollIntervalMs };
}

/** A finished task's result or error, inlined in a 2026 `tasks/get` (a failed one says why in `statusMessage`). */
function endFields(end: McpTaskEnd | undefined): Record<string, unknown> {
  if (end?.status === 'completed') return { result: end.result };
  if (end?.status === 'failed') return { statusMessage: end.error.message, error: end.error };
  return {};
}

/** The params a method needs, well formed; anything else is the SDK's to refuse (its exact errors). */
function wellFormed(method: string, params: Record<string, unknown>): boolean {
  switch (method) {
    case 'tools/call': {
      const { name, arguments: args, task } = params;
      return typeof name === 'string' && (args === undefined || isPlainObject(args)) && (task === undefined || isPlainObject(task));
    }
    case 'tasks/get':
    case 'tasks/cancel':
    case 'tasks/result':
      return typeof params.taskId === 'string';
    case 'tasks/update':
      return typeof params.taskId === 'string' && (params.inputResponses === undefined || isPlainObject(params.inputResponses));
    default:
      return true;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}


/** A header value without the optional whitespace around it (RFC 9110), as the SDK reads it. */
function trimmed(value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' ? value.replace(/^[ \t]+|[ \t]+$/g, '') : undefined;
}
