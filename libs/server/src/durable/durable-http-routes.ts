import type { Logger } from '@nestjs/common';
import {
  DURABLE_STREAM_STATUSES,
  encodeDurableEventsPage,
  encodeSseRetry,
  RpcErrorCode,
  RpcHeader,
  sseEncoder,
  STORE_UNAVAILABLE_MESSAGE,
  type DurableCancelAnswer,
  type DurableStreamList,
  type DurableStreamStatus,
  type DurableStreamSummary,
} from '@nest-jsonrpc/protocol';
import type { RpcHttpExchange } from '../context/rpc-context.js';
import { methodNotAllowed, type HttpRouteGroup } from '../http/http-edge.js';
import type { RpcReplyWriter } from '../http/rpc-reply-writer.js';
import { refusalBody } from '../http/transport-errors.js';
import type { ResolvedJsonRpcOptions } from '../options/json-rpc-options.js';
import { StreamStoreUnavailableError } from '../stream-stores/stream-store-unavailable.js';
import type { DurableStreamRecord } from '../stream-stores/stream-store.js';
import { openStreamResponse } from '../streaming/stream-head.js';
import { KeepAliveClock } from '../streaming/stream-output.js';
import type { DurableStreamAccess } from './durable-stream-access.js';
import type { DurableStreamRunner } from './durable-stream-runner.js';
import { SseAttachments } from './sse-attachment.js';

/** Stream ids are `crypto.randomUUID()` values; anything else cannot exist and never reaches the store. */
const STREAM_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
/**
 * A cursor or count: digits only, no sign, no exponent, at most 15 significant digits (a safe
 * integer). Leading zeros are read as the number (`00` is 0, `007` is 7) — the same everywhere a
 * cursor or count is read (`Last-Event-ID`, `last_event_id`, `after`, `limit`), so `00` means
 * what `0` means.
 */
const NON_NEGATIVE_INTEGER = /^0*(0|[1-9][0-9]{0,14})$/;
const DEFAULT_EVENTS_LIMIT = 100;
const MAX_EVENTS_LIMIT = 1000;

/** The JSON-RPC code closest to each status of these routes (their transport errors: `http/transport-errors.ts`). */
const ERROR_CODE_OF_STATUS: Record<number, number> = {
  400: RpcErrorCode.InvalidParams,
  403: RpcErrorCode.AccessDenied,
  404: RpcErrorCode.NotFound,
  410: RpcErrorCode.NotFound,
  503: RpcErrorCode.InternalError,
};

function summaryOf(r: DurableStreamRecord): DurableStreamSummary {
  return {
    stream_id: r.id,
    method: r.method,
    status: r.status,
    events: r.events,
    created_at: new Date(r.createdAt).toISOString(),
    completed_at: r.completedAt === null ? null : new Date(r.completedAt).toISOString(),
  };
}

/** A query parameter given once, or undefined; `null` when it was repeated (never meaningful here). */
function queryParam(value: string | string[] | undefined): string | undefined | null {
  return Array.isArray(value) ? null : value;
}

/** The message of a repeated query parameter: its own, not the one of a bad value. */
function givenTwice(name: string): string {
  return `${name} was given more than once`;
}

/** What the durable routes read of the resolved options: their section, the write stall bound, and the SSE headers of `stream`. */
export type DurableRouteOptions = Pick<ResolvedJsonRpcOptions, 'durable' | 'limits' | 'stream'>;

/** A request a {@link DurableCallerIdentifier} refuses: the answer sent instead of the route's. */
export interface DurableCallerRefusal {
  /** 400/401 (the credentials), 403, or 503 (they cannot be checked now: sent with `Retry-After`). */
  readonly status: 400 | 401 | 403 | 503;
  /** The body's `{"error":{code,message}}`. */
  readonly error: { readonly code: number; readonly message: string };
  /** `WWW-Authenticate` (RFC 6750 §3), when the refusal is a challenge. */
  readonly wwwAuthenticate?: string;
}

/**
 * What a {@link DurableCallerIdentifier} answers about one request.
 */
export type DurableCallerIdentity =
  /** Refused: `refusal` is the answer, sent instead of the route's. */
  | { readonly kind: 'refused'; readonly refusal: DurableCallerRefusal }
  /**
   * The identifier's own credentials named the caller (it set `request.user`: a bearer token).
   * A 403 because the caller's roles fall short of a stream's method carries
   * `stepUp(method)` as `WWW-Authenticate` (RFC 6750 `insufficient_scope`: what to ask for), so
   * the client can get a token that passes.
   */
  | { readonly kind: 'credentials'; readonly stepUp: (method: string) => string }
  /** Nothing added: the request alone says who is calling (the app's own `request.user`, or anonymous). */
  | { readonly kind: 'request' };

/**
 * Identifies the caller of a durable route from what the app's own hooks left unsaid, before
 * ownership and roles are read from the request (`DurableStreamAccess.callerOf`): it may set
 * `request.user`, or refuse the request. Handed to the routes where the module is composed
 * (json-rpc-server.ts): with `mcp.auth.jwt`, the MCP routes' bearer verifier, so a durable tool's
 * `sse_url` reads with the token that started it. It runs on every route under the prefix, the
 * 405s and the catch-all 404 too, so a bad token reads the same everywhere. `durable/` knows
 * nothing of where it comes from.
 */
export type DurableCallerIdentifier = (exchange: RpcHttpExchange) => Promise<DurableCallerIdentity>;

/** The identity of a request when no identifier is given: the request alone. */
const BY_REQUEST: DurableCallerIdentity = Object.freeze({ kind: 'request' });

/**
 * `GET <path>` (list), `GET <path>/:id` (SSE attach), `GET <path>/:id/events` (JSON page) and
 * `DELETE <path>/:id` (cancel). Error bodies are `{"error":{code,message}}` with the JSON-RPC code
 * closest to the status (404/410 -> -32002, 400 -> -32602, 403 -> -32001). The attach route speaks
 * the live stream route's SSE dialect: its encoder, headers (`stream.headers`), keep-alive comment,
 * escaping, and a final `event: end`.
 */
export class DurableHttpRoutes {
  private readonly attachments: SseAttachments;
  private readonly sseHead: string;

  constructor(
    private readonly runner: DurableStreamRunner,
    private readonly access: DurableStreamAccess,
    private readonly writer: RpcReplyWriter,
    private readonly options: DurableRouteOptions,
    private readonly logger: Logger,
    /** Who the caller is beyond what the app's hooks said (see {@link DurableCallerIdentifier}); absent: the request alone. */
    private readonly identifyCaller?: DurableCallerIdentifier,
  ) {
    const keepAlive = new KeepAliveClock(options.durable.keepAliveMs, sseEncoder.keepAlive!);
    this.attachments = new SseAttachments(keepAlive, logger, options.limits.stalledWriteMs);
    this.sseHead = encodeSseRetry(options.durable.retryMs);
  }

  /** SSE responses attached to this process right now. */
  get attachedHere(): number {
    return this.attachments.size;
  }

  routes(): HttpRouteGroup {
    const base = this.options.durable.path;
    // Identified first like every route here (a bad token reads 401 whatever the verb), then 405 with `Allow`.
    const notAllowed = (method: readonly ('POST' | 'PUT' | 'PATCH' | 'DELETE')[], path: string, allow: string) => {
      const route = methodNotAllowed(this.writer, 'streams', method, path, { allow });
      return { ...route, handle: this.identified(route.handle) };
    };
    return {
      name: 'Durable stream route',
      family: 'streams',
      // No route here reads a body, but one sent anyway is held to the same limit (and 413) as /rpc.
      body: 'ignored',
      routes: [
        { method: 'GET', path: base, handle: this.serve((exchange) => this.list(exchange)) },
        { method: 'GET', path: `${base}/:id`, handle: this.serve((exchange, identity) => this.attach(exchange, identity)) },
        { method: 'GET', path: `${base}/:id/events`, handle: this.serve((exchange, identity) => this.events(exchange, identity)) },
        { method: 'DELETE', path: `${base}/:id`, handle: this.serve((exchange, identity) => this.cancel(exchange, identity)) },
        // Other verbs on these resources: 405 with what they do serve.
        notAllowed(['POST', 'PUT', 'PATCH', 'DELETE'], base, 'GET'),
        notAllowed(['POST', 'PUT', 'PATCH'], `${base}/:id`, 'GET, DELETE'),
        notAllowed(['POST', 'PUT', 'PATCH', 'DELETE'], `${base}/:id/events`, 'GET'),
        // Ids too long for a route parameter, deeper paths, other verbs: the same JSON 404.
        { method: '*', path: `${base}/*`, handle: this.identified((exchange) => this.sendError(exchange, 404, 'Stream not found')) },
      ],
      // Attached responses would keep `server.close()` waiting: end them (clients resume elsewhere).
      onClose: () => this.attachments.close(),
    };
  }

  private async list(exchange: RpcHttpExchange): Promise<void> {
    const status = queryParam(exchange.query.status);
    if (status === null) return this.sendError(exchange, 400, givenTwice('status'));
    if (status !== undefined && !DURABLE_STREAM_STATUSES.includes(status as DurableStreamStatus)) {
      return this.sendError(exchange, 400, `status must be one of ${DURABLE_STREAM_STATUSES.join(', ')}`);
    }
    const records = await this.access.list(this.access.callerOf(exchange.request), status as DurableStreamStatus | undefined);
    const body: DurableStreamList = { streams: records.map(summaryOf) };
    this.writer.sendJson(exchange, 200, JSON.stringify(body));
  }

  private async attach(exchange: RpcHttpExchange, identity: DurableCallerIdentity): Promise<void> {
    const record = await this.accessibleRecord(exchange, identity);
    if (!record) return;
    const cursor = this.cursorOf(exchange);
    if (typeof cursor !== 'number') return this.sendError(exchange, 400, cursor.invalid);
    if (cursor > record.events) {
      return this.sendError(exchange, 400, `Last event id ${cursor} is out of range: the stream has ${record.events} event(s)`);
    }
    // Reconnecting after the terminal event: nothing more will ever come. 204 tells EventSource to stop.
    if (record.status !== 'running' && cursor === record.events) {
      this.writer.sendBody(exchange, 204, { 'cache-control': 'no-store' });
      return;
    }
    const res = openStreamResponse(this.writer, exchange, this.options.stream.headers, sseEncoder.contentType, record.id);
    // HEAD: GET's status and headers, and the answer ends there: nothing is replayed or attached for it.
    if (exchange.method === 'HEAD') return void res.end();
    res.write(this.sseHead);
    this.runner.subscribe(record.id, cursor, this.attachments.open(res));
  }

  private async events(exchange: RpcHttpExchange, identity: DurableCallerIdentity): Promise<void> {
    const record = await this.accessibleRecord(exchange, identity);
    if (!record) return;
    const after = queryParam(exchange.query.after);
    const limit = queryParam(exchange.query.limit);
    if (after === null) return this.sendError(exchange, 400, givenTwice('after'));
    if (limit === null) return this.sendError(exchange, 400, givenTwice('limit'));
    if (after !== undefined && !NON_NEGATIVE_INTEGER.test(after)) {
      return this.sendError(exchange, 400, 'after must be a non-negative integer');
    }
    if (limit !== undefined && (!NON_NEGATIVE_INTEGER.test(limit) || Number(limit) < 1 || Number(limit) > MAX_EVENTS_LIMIT)) {
      return this.sendError(exchange, 400, `limit must be an integer from 1 to ${MAX_EVENTS_LIMIT}`);
    }
    const afterId = after === undefined ? 0 : Number(after);
    if (afterId > record.events) return this.sendError(exchange, 400, `after ${afterId} is out of range: the stream has ${record.events} event(s)`);
    const page = await this.runner.read(record.id, afterId, limit === undefined ? DEFAULT_EVENTS_LIMIT : Number(limit));
    this.writer.sendJson(exchange, 200, encodeDurableEventsPage(page));
  }

  private async cancel(exchange: RpcHttpExchange, identity: DurableCallerIdentity): Promise<void> {
    const record = await this.accessibleRecord(exchange, identity);
    if (!record) return;
    const status = record.status === 'running' ? await this.runner.cancel(record.id) : record.status;
    if (status === 'missing') return this.sendError(exchange, 410, 'Stream expired: past retention');
    const answer: DurableCancelAnswer = { stream_id: record.id, status };
    this.writer.sendJson(exchange, 200, JSON.stringify(answer));
  }

  /**
   * The stream the caller may see, or undefined once the refusal has been sent. A 403 of a caller
   * the identifier's credentials named carries its step-up challenge; one of the app's caller does not.
   */
  private async accessibleRecord(exchange: RpcHttpExchange, identity: DurableCallerIdentity): Promise<DurableStreamRecord | undefined> {
    const id = exchange.param('id') ?? '';
    if (!STREAM_ID.test(id)) return void this.sendError(exchange, 404, 'Stream not found');
    const access = await this.access.access(id, this.access.callerOf(exchange.request));
    if (access.ok) return access.record;
    const challenge = access.status === 403 && identity.kind === 'credentials' ? { 'www-authenticate': identity.stepUp(access.method) } : undefined;
    return void this.sendError(exchange, access.status, access.message, challenge);
  }

  /**
   * The cursor of an attach: `Last-Event-ID` (what EventSource sends on reconnect), else the
   * `last_event_id` query parameter (for clients that cannot set headers); none means from the start.
   */
  private cursorOf(exchange: RpcHttpExchange): number | { invalid: string } {
    const header = exchange.headers[RpcHeader.LastEventId];
    if (Array.isArray(header)) return { invalid: 'Last-Event-ID was sent more than once' };
    // An empty header is what the SSE spec calls "no last event id".
    if (header !== undefined && header !== '') {
      return NON_NEGATIVE_INTEGER.test(header) ? Number(header) : { invalid: `Last-Event-ID must be a non-negative integer, got ${JSON.stringify(header.slice(0, 40))}` };
    }
    const query = queryParam(exchange.query.last_event_id);
    if (query === null) return { invalid: givenTwice('last_event_id') };
    if (query === undefined || query === '') return 0;
    return NON_NEGATIVE_INTEGER.test(query) ? Number(query) : { invalid: `last_event_id must be a non-negative integer, got ${JSON.stringify(query.slice(0, 40))}` };
  }

  /**
   * A route that reads the caller: identified first (a refusal is the answer, before any id or
   * store is looked at, as a bad token is refused whatever it asks for), then served unless the
   * store is down. Without an identifier the request alone says who is calling.
   */
  private serve(handle: (exchange: RpcHttpExchange, identity: DurableCallerIdentity) => Promise<void>) {
    return this.identified(this.unlessStoreDown(handle));
  }

  /**
   * `handle` after the identifier (when there is one): its refusal is the answer instead, else
   * `handle` learns what the identifier said of the caller. Every route under the prefix goes
   * through here — the 405s and the catch-all 404 too — so a forged token reads 401 (and a key
   * outage 503) whatever the path and verb, and a 404/405 means the credentials passed.
   */
  private identified(handle: (exchange: RpcHttpExchange, identity: DurableCallerIdentity) => void | Promise<void>) {
    const identify = this.identifyCaller;
    if (!identify) return (exchange: RpcHttpExchange) => handle(exchange, BY_REQUEST);
    return async (exchange: RpcHttpExchange): Promise<void> => {
      const identity = await identify(exchange);
      if (identity.kind === 'refused') return this.sendRefusal(exchange, identity.refusal);
      return handle(exchange, identity);
    };
  }

  /** A refusal of the identifier, in these routes' body shape, with its challenge or `Retry-After`. */
  private sendRefusal(exchange: RpcHttpExchange, { status, error, wwwAuthenticate }: DurableCallerRefusal): void {
    if (status === 503) exchange.noteRetryAfter(this.retryAfterSeconds);
    const challenge = wwwAuthenticate === undefined ? undefined : { 'www-authenticate': wwwAuthenticate };
    this.writer.sendJson(exchange, status, refusalBody('error', { code: error.code, message: error.message }), challenge);
  }

  /** What a 503 asks the client to wait: `retryMs` in seconds, at least 1 — about as long as an EventSource waits anyway. */
  private get retryAfterSeconds(): number {
    return Math.max(1, Math.ceil(this.options.durable.retryMs / 1000));
  }

  /**
   * `handle`, answering 503 with `Retry-After` (`retryMs` in seconds) when the store cannot be
   * reached: worth retrying, after about as long as an EventSource waits anyway. Anything else
   * it throws goes on to the edge's `internal` refusal (500, logged).
   */
  private unlessStoreDown(handle: (exchange: RpcHttpExchange, identity: DurableCallerIdentity) => Promise<void>) {
    return async (exchange: RpcHttpExchange, identity: DurableCallerIdentity): Promise<void> => {
      try {
        await handle(exchange, identity);
      } catch (error) {
        if (!(error instanceof StreamStoreUnavailableError) || exchange.sent) throw error;
        exchange.noteRetryAfter(this.retryAfterSeconds);
        this.sendError(exchange, 503, STORE_UNAVAILABLE_MESSAGE);
      }
    };
  }

  private sendError(exchange: RpcHttpExchange, status: number, message: string, headers?: Record<string, string>): void {
    this.writer.sendJson(exchange, status, refusalBody('error', { code: ERROR_CODE_OF_STATUS[status], message }), headers);
  }
}
