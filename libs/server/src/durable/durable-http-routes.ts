import type { Logger } from '@nestjs/common';
import type { FastifyError, FastifyInstance, FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify';
import { RpcErrorCode } from '../protocol/error-codes.js';
import { DURABLE_STREAM_STATUSES, type DurableStreamRecord, type DurableStreamStatus } from './durable-event.js';
import type { ResolvedDurableOptions } from './durable-options.js';
import type { DurableStreamService } from './durable-stream.service.js';
import { sseRetryFrame } from './sse-event-format.js';

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';
/** Stream ids are `crypto.randomUUID()` values; anything else cannot exist and never reaches the store. */
const STREAM_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
/** A cursor or count: digits only, no sign, no exponent, at most 15 digits (a safe integer). */
const NON_NEGATIVE_INTEGER = /^(0|[1-9][0-9]{0,14})$/;
const DEFAULT_EVENTS_LIMIT = 100;
const MAX_EVENTS_LIMIT = 1000;

const ERROR_CODE_OF_STATUS: Record<number, number> = {
  400: RpcErrorCode.InvalidParams,
  403: RpcErrorCode.AccessDenied,
  404: RpcErrorCode.NotFound,
  410: RpcErrorCode.NotFound,
  500: RpcErrorCode.InternalError,
};

export interface DurableHttpRoutesDeps {
  service: DurableStreamService;
  options: ResolvedDurableOptions;
  logger: Logger;
}

type IdParams = { Params: { id: string }; Querystring: Record<string, string | string[] | undefined> };
type ListQuery = { Querystring: Record<string, string | string[] | undefined> };

function sendError(reply: FastifyReply, status: number, message: string): void {
  reply
    .code(status)
    .header('content-type', JSON_CONTENT_TYPE)
    .header('cache-control', 'no-store')
    .send(`{"error":{"code":${ERROR_CODE_OF_STATUS[status]},"message":${JSON.stringify(message)}}}`);
}

function sendJson(reply: FastifyReply, text: string): void {
  reply.code(200).header('content-type', JSON_CONTENT_TYPE).header('cache-control', 'no-store').send(text);
}

function recordJson(r: DurableStreamRecord): string {
  return JSON.stringify({
    stream_id: r.id,
    method: r.method,
    status: r.status,
    events: r.events,
    created_at: new Date(r.createdAt).toISOString(),
    completed_at: r.completedAt === null ? null : new Date(r.completedAt).toISOString(),
  });
}

/** A query parameter given once, or undefined; `null` when it was repeated (never meaningful here). */
function single(value: string | string[] | undefined): string | undefined | null {
  return Array.isArray(value) ? null : value;
}

/**
 * The cursor of an attach: `Last-Event-ID` (what EventSource sends on reconnect), else the
 * `last_event_id` query parameter (for clients that cannot set headers); none means from the start.
 */
function cursorOf(request: FastifyRequest<IdParams>): number | { invalid: string } {
  const header = request.headers['last-event-id'];
  if (Array.isArray(header)) return { invalid: 'Last-Event-ID was sent more than once' };
  // An empty header is what the SSE spec calls "no last event id".
  if (header !== undefined && header !== '') {
    return NON_NEGATIVE_INTEGER.test(header) ? Number(header) : { invalid: `Last-Event-ID must be a non-negative integer, got ${JSON.stringify(header.slice(0, 40))}` };
  }
  const query = single(request.query.last_event_id);
  if (query === null) return { invalid: 'last_event_id was given more than once' };
  if (query === undefined || query === '') return 0;
  return NON_NEGATIVE_INTEGER.test(query) ? Number(query) : { invalid: `last_event_id must be a non-negative integer, got ${JSON.stringify(query.slice(0, 40))}` };
}

/**
 * `GET <path>` (list), `GET <path>/:id` (SSE attach), `GET <path>/:id/events` (JSON page) and
 * `DELETE <path>/:id` (cancel). Error bodies are `{"error":{code,message}}` with the JSON-RPC code
 * closest to the status (404/410 -> -32002, 400 -> -32602, 403 -> -32001).
 */
export function durableHttpRoutes({ service, options, logger }: DurableHttpRoutesDeps): FastifyPluginCallback {
  const base = options.path;
  const sseHead = sseRetryFrame(options.retryMs);

  const list = async (request: FastifyRequest<ListQuery>, reply: FastifyReply): Promise<void> => {
    const status = single(request.query.status);
    if (status === null || (status !== undefined && !DURABLE_STREAM_STATUSES.includes(status as DurableStreamStatus))) {
      return sendError(reply, 400, `status must be one of ${DURABLE_STREAM_STATUSES.join(', ')}`);
    }
    const records = await service.list(service.callerOf(request), status as DurableStreamStatus | undefined);
    sendJson(reply, `{"streams":[${records.map(recordJson).join(',')}]}`);
  };

  const attach = async (request: FastifyRequest<IdParams>, reply: FastifyReply): Promise<void> => {
    const id = request.params.id;
    if (!STREAM_ID.test(id)) return sendError(reply, 404, 'Stream not found');
    const access = await service.access(id, service.callerOf(request));
    if (!access.ok) return sendError(reply, access.status, access.message);
    const cursor = cursorOf(request);
    if (typeof cursor !== 'number') return sendError(reply, 400, cursor.invalid);
    const record = access.record;
    if (cursor > record.events) {
      return sendError(reply, 400, `Last event id ${cursor} is out of range: the stream has ${record.events} event(s)`);
    }
    // Reconnecting after the terminal event: nothing more will ever come. 204 tells EventSource to stop.
    if (record.status !== 'running' && cursor === record.events) {
      reply.code(204).header('cache-control', 'no-store').send();
      return;
    }
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      ...(reply.getHeaders() as Record<string, string>),
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no',
      'x-stream-id': id,
    });
    res.write(sseHead);
    service.attachSse(res, id, cursor);
  };

  const events = async (request: FastifyRequest<IdParams>, reply: FastifyReply): Promise<void> => {
    const id = request.params.id;
    if (!STREAM_ID.test(id)) return sendError(reply, 404, 'Stream not found');
    const access = await service.access(id, service.callerOf(request));
    if (!access.ok) return sendError(reply, access.status, access.message);
    const after = single(request.query.after);
    const limit = single(request.query.limit);
    if (after === null || (after !== undefined && !NON_NEGATIVE_INTEGER.test(after))) {
      return sendError(reply, 400, 'after must be a non-negative integer');
    }
    if (limit === null || (limit !== undefined && (!NON_NEGATIVE_INTEGER.test(limit) || Number(limit) < 1 || Number(limit) > MAX_EVENTS_LIMIT))) {
      return sendError(reply, 400, `limit must be an integer from 1 to ${MAX_EVENTS_LIMIT}`);
    }
    const afterId = after === undefined ? 0 : Number(after);
    if (afterId > access.record.events) {
      return sendError(reply, 400, `after ${afterId} is out of range: the stream has ${access.record.events} event(s)`);
    }
    const page = await service.read(id, afterId, limit === undefined ? DEFAULT_EVENTS_LIMIT : Number(limit));
    let text = '{"events":[';
    for (let i = 0; i < page.length; i++) {
      const e = page[i];
      text += `${i ? ',' : ''}{"id":${e.id},"event":"${e.event}","data":${e.data}}`;
    }
    sendJson(reply, `${text}]}`);
  };

  const cancel = async (request: FastifyRequest<IdParams>, reply: FastifyReply): Promise<void> => {
    const id = request.params.id;
    if (!STREAM_ID.test(id)) return sendError(reply, 404, 'Stream not found');
    const access = await service.access(id, service.callerOf(request));
    if (!access.ok) return sendError(reply, access.status, access.message);
    const status = access.record.status === 'running' ? await service.cancel(id) : access.record.status;
    if (status === 'missing') return sendError(reply, 410, 'Stream expired: past retention');
    sendJson(reply, `{"stream_id":"${id}","status":"${status}"}`);
  };

  const onError = (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (error.statusCode !== undefined && error.statusCode < 500) return sendError(reply, 400, 'Bad request');
    logger.error(`Durable stream route ${request.method} ${request.url} failed: ${error.message}`, error.stack);
    sendError(reply, 500, 'Internal error');
  };

  return (instance: FastifyInstance, _opts, done) => {
    instance.setErrorHandler(onError);
    instance.get(base, list);
    instance.get(`${base}/:id`, attach);
    instance.get(`${base}/:id/events`, events);
    instance.delete(`${base}/:id`, cancel);
    // Ids too long for a route parameter, deeper paths, other verbs: the same JSON 404.
    instance.all(`${base}/*`, (_request, reply) => sendError(reply, 404, 'Stream not found'));
    done();
  };
}
