import type { Logger } from '@nestjs/common';
import type { FastifyError, FastifyInstance, FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify';
import type { OutgoingHttpHeaders } from 'node:http';
import {
  DURABLE_STREAM_STATUSES,
  encodeSseRetry,
  RpcErrorCode,
  RpcHeader,
  sseEncoder,
  type DurableStreamStatus,
  type DurableStreamSummary,
} from '@nest-jsonrpc/protocol';
import { bodyBoundsOf } from '../http/json-body-parser.js';
import { enforceBodyLimit } from '../http/early-answer.js';
import { requestIdOf } from '../http/request-id.js';
import { tooLargeError } from '../http/transport-errors.js';
import type { RpcReplyWriter } from '../http/rpc-reply-writer.js';
import type { ResolvedJsonRpcOptions } from '../options/json-rpc-options.js';
import type { DurableStreamRecord } from '../stream-stores/stream-store.js';
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

/** The JSON-RPC code closest to each status of these routes. */
const ERROR_CODE_OF_STATUS: Record<number, number> = {
  400: RpcErrorCode.InvalidParams,
  403: RpcErrorCode.AccessDenied,
  404: RpcErrorCode.NotFound,
  405: RpcErrorCode.InvalidRequest,
  410: RpcErrorCode.NotFound,
  500: RpcErrorCode.InternalError,
};

type Query = Record<string, string | string[] | undefined>;
type IdRequest = FastifyRequest<{ Params: { id: string }; Querystring: Query }>;
type ListRequest = FastifyRequest<{ Querystring: Query }>;

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
function single(value: string | string[] | undefined): string | undefined | null {
  return Array.isArray(value) ? null : value;
}

/** The message of a repeated query parameter: its own, not the one of a bad value. */
function givenTwice(name: string): string {
  return `${name} was given more than once`;
}

/**
 * `GET <path>` (list), `GET <path>/:id` (SSE attach), `GET <path>/:id/events` (JSON page) and
 * `DELETE <path>/:id` (cancel). Error bodies are `{"error":{code,message}}` with the JSON-RPC code
 * closest to the status (404/410 -> -32002, 400 -> -32602, 403 -> -32001). The attach route speaks
 * the live stream route's SSE dialect: its encoder, headers (`stream.headers`), keep-alive comment,
 * escaping, and a final `event: end`. Small protected methods, so a subclass can change one step.
 */
export class DurableHttpRoutes {
  private readonly attachments: SseAttachments;
  private readonly sseHead: string;
  private readonly tooLarge: ReturnType<typeof tooLargeError>;

  constructor(
    protected readonly runner: DurableStreamRunner,
    protected readonly access: DurableStreamAccess,
    protected readonly writer: RpcReplyWriter,
    protected readonly options: ResolvedJsonRpcOptions,
    protected readonly logger: Logger,
  ) {
    this.attachments = new SseAttachments(options.durable.keepAliveMs, logger, options.limits.stalledWriteMs);
    this.sseHead = encodeSseRetry(options.durable.retryMs);
    this.tooLarge = tooLargeError(options.maxRequestSize);
    for (const route of ['list', 'attach', 'events', 'cancel', 'onError'] as const) this[route] = this[route].bind(this) as never;
  }

  /** SSE responses attached to this process right now. */
  get attachedHere(): number {
    return this.attachments.size;
  }

  plugin(): FastifyPluginCallback {
    const base = this.options.durable.path;
    return (instance: FastifyInstance, _opts, done) => {
      // No route here reads a body, but one sent anyway is held to the same limit (and 413) as /rpc.
      enforceBodyLimit(instance, bodyBoundsOf(this.options, this.writer));
      instance.setErrorHandler(this.onError);
      instance.get(base, this.list);
      instance.get(`${base}/:id`, this.attach);
      instance.get(`${base}/:id/events`, this.events);
      instance.delete(`${base}/:id`, this.cancel);
      // Other verbs on these resources: 405 with what they do serve.
      instance.route({ method: ['POST', 'PUT', 'PATCH', 'DELETE'], url: base, handler: this.notAllowed('GET') });
      instance.route({ method: ['POST', 'PUT', 'PATCH'], url: `${base}/:id`, handler: this.notAllowed('GET, DELETE') });
      instance.route({ method: ['POST', 'PUT', 'PATCH', 'DELETE'], url: `${base}/:id/events`, handler: this.notAllowed('GET') });
      // Ids too long for a route parameter, deeper paths, other verbs: the same JSON 404.
      instance.all(`${base}/*`, (_request, reply) => this.sendError(reply, 404, 'Stream not found'));
      // Attached responses would keep `server.close()` waiting: end them (clients resume elsewhere).
      instance.addHook('preClose', (hookDone) => {
        this.attachments.close();
        hookDone();
      });
      done();
    };
  }

  protected async list(request: ListRequest, reply: FastifyReply): Promise<void> {
    const status = single(request.query.status);
    if (status === null) return this.sendError(reply, 400, givenTwice('status'));
    if (status !== undefined && !DURABLE_STREAM_STATUSES.includes(status as DurableStreamStatus)) {
      return this.sendError(reply, 400, `status must be one of ${DURABLE_STREAM_STATUSES.join(', ')}`);
    }
    const records = await this.access.list(this.access.callerOf(request), status as DurableStreamStatus | undefined);
    this.writer.sendJson(reply, 200, JSON.stringify({ streams: records.map(summaryOf) }));
  }

  protected async attach(request: IdRequest, reply: FastifyReply): Promise<void> {
    const record = await this.accessibleRecord(request, reply);
    if (!record) return;
    const cursor = this.cursorOf(request);
    if (typeof cursor !== 'number') return this.sendError(reply, 400, cursor.invalid);
    if (cursor > record.events) {
      return this.sendError(reply, 400, `Last event id ${cursor} is out of range: the stream has ${record.events} event(s)`);
    }
    // Reconnecting after the terminal event: nothing more will ever come. 204 tells EventSource to stop.
    if (record.status !== 'running' && cursor === record.events) {
      reply.code(204).header('cache-control', 'no-store').send();
      return;
    }
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, this.sseHeaders(request, reply, record.id));
    res.write(this.sseHead);
    this.runner.subscribe(record.id, cursor, this.attachments.open(res));
  }

  protected async events(request: IdRequest, reply: FastifyReply): Promise<void> {
    const record = await this.accessibleRecord(request, reply);
    if (!record) return;
    const after = single(request.query.after);
    const limit = single(request.query.limit);
    if (after === null) return this.sendError(reply, 400, givenTwice('after'));
    if (limit === null) return this.sendError(reply, 400, givenTwice('limit'));
    if (after !== undefined && !NON_NEGATIVE_INTEGER.test(after)) {
      return this.sendError(reply, 400, 'after must be a non-negative integer');
    }
    if (limit !== undefined && (!NON_NEGATIVE_INTEGER.test(limit) || Number(limit) < 1 || Number(limit) > MAX_EVENTS_LIMIT)) {
      return this.sendError(reply, 400, `limit must be an integer from 1 to ${MAX_EVENTS_LIMIT}`);
    }
    const afterId = after === undefined ? 0 : Number(after);
    if (afterId > record.events) return this.sendError(reply, 400, `after ${afterId} is out of range: the stream has ${record.events} event(s)`);
    const page = await this.runner.read(record.id, afterId, limit === undefined ? DEFAULT_EVENTS_LIMIT : Number(limit));
    // `data` is stored JSON text: spliced in, never parsed and re-serialised.
    let text = '{"events":[';
    for (let i = 0; i < page.length; i++) {
      const e = page[i];
      text += `${i ? ',' : ''}{"id":${e.id},"event":"${e.event}","data":${e.data}}`;
    }
    this.writer.sendJson(reply, 200, `${text}]}`);
  }

  protected async cancel(request: IdRequest, reply: FastifyReply): Promise<void> {
    const record = await this.accessibleRecord(request, reply);
    if (!record) return;
    const status = record.status === 'running' ? await this.runner.cancel(record.id) : record.status;
    if (status === 'missing') return this.sendError(reply, 410, 'Stream expired: past retention');
    this.writer.sendJson(reply, 200, JSON.stringify({ stream_id: record.id, status }));
  }

  /** The stream the caller may see, or undefined once the refusal has been sent. */
  protected async accessibleRecord(request: IdRequest, reply: FastifyReply): Promise<DurableStreamRecord | undefined> {
    const id = request.params.id;
    if (!STREAM_ID.test(id)) return void this.sendError(reply, 404, 'Stream not found');
    const access = await this.access.access(id, this.access.callerOf(request));
    if (!access.ok) return void this.sendError(reply, access.status, access.message);
    return access.record;
  }

  /**
   * The cursor of an attach: `Last-Event-ID` (what EventSource sends on reconnect), else the
   * `last_event_id` query parameter (for clients that cannot set headers); none means from the start.
   */
  protected cursorOf(request: IdRequest): number | { invalid: string } {
    const header = request.headers[RpcHeader.LastEventId];
    if (Array.isArray(header)) return { invalid: 'Last-Event-ID was sent more than once' };
    // An empty header is what the SSE spec calls "no last event id".
    if (header !== undefined && header !== '') {
      return NON_NEGATIVE_INTEGER.test(header) ? Number(header) : { invalid: `Last-Event-ID must be a non-negative integer, got ${JSON.stringify(header.slice(0, 40))}` };
    }
    const query = single(request.query.last_event_id);
    if (query === null) return { invalid: givenTwice('last_event_id') };
    if (query === undefined || query === '') return 0;
    return NON_NEGATIVE_INTEGER.test(query) ? Number(query) : { invalid: `last_event_id must be a non-negative integer, got ${JSON.stringify(query.slice(0, 40))}` };
  }

  /** The live stream route's headers: those hooks set (CORS...), `stream.headers`, the SSE type, ids. */
  protected sseHeaders(request: FastifyRequest, reply: FastifyReply, id: string): OutgoingHttpHeaders {
    return {
      ...(reply.getHeaders() as OutgoingHttpHeaders),
      ...this.options.stream.headers,
      'content-type': sseEncoder.contentType,
      [RpcHeader.RequestId]: requestIdOf(request),
      [RpcHeader.StreamId]: id,
    };
  }

  /** `405` with `Allow`, in these routes' error shape. */
  protected notAllowed(allow: string) {
    const message = `Method not allowed: use ${allow.replace(', ', ' or ')}`;
    return (_request: FastifyRequest, reply: FastifyReply): void => this.sendError(reply.header('allow', allow), 405, message);
  }

  protected sendError(reply: FastifyReply, status: number, message: string): void {
    this.writer.sendJson(reply, status, JSON.stringify({ error: { code: ERROR_CODE_OF_STATUS[status], message } }));
  }

  protected onError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return this.writer.sendTransportError(request, reply, 413, this.tooLarge);
    if (error.statusCode !== undefined && error.statusCode < 500) return this.sendError(reply, 400, 'Bad request');
    this.logger.error(`Durable stream route ${request.method} ${request.url} failed: ${error.message}`, error.stack);
    this.sendError(reply, 500, 'Internal error');
  }
}
