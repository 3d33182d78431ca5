import { isErrorObject, RpcHeader } from '@nest-jsonrpc/protocol';
import { SseEventDecoder, type SseEvent } from '../decoding/sse-decoder.js';
import { mediaTypeOf, STREAM_MEDIA_TYPES } from '../decoding/decoder-for-content-type.js';
import {
  JsonRpcError,
  JsonRpcProtocolError,
  JsonRpcStreamTruncatedError,
  JsonRpcTransportError,
} from '../errors/client-errors.js';
import { discardBody } from '../transport/http-body.js';
import { describeCause, RequestScope } from '../transport/request-scope.js';
import type { ExchangeSettings } from './exchange-settings.js';
import { failedAnswer } from './failed-answer.js';

/** One stored event of a durable stream (docs/durable.md, "Wire"): ids are integers from 1, one per event. */
export interface DurableStreamEvent<T = unknown> {
  id: number;
  /** `chunk`, `progress`, or the terminal `done` / `cancelled` (an `error` terminal is thrown instead). */
  event: 'chunk' | 'progress' | 'done' | 'cancelled' | (string & {});
  data: T;
}

export interface ReconnectOptions {
  /** First delay after a drop, in ms; a `retry:` field from the server replaces it. Default 250. */
  initialDelayMs?: number;
  /** Cap of the doubling delay, in ms. Default 10000. */
  maxDelayMs?: number;
  /** Failed connection attempts in a row (no event received) before giving up. Default 10. */
  maxAttempts?: number;
}

export interface AttachOptions {
  /** Resume after this event id (what a previous attach last yielded); default: from the start. */
  lastEventId?: number | string;
  signal?: AbortSignal;
  headers?: HeadersInit;
  reconnect?: ReconnectOptions;
}

export interface AttachRequest {
  readonly url: string;
  readonly headers: () => Promise<Headers>;
  readonly options: AttachOptions;
  readonly settings: ExchangeSettings;
}

/** Statuses worth retrying: the server or a proxy is momentarily unable, not refusing. */
function isRetryableStatus(status: number): boolean {
  return status >= 500 || status === 408 || status === 429;
}

/**
 * `GET <streamsUrl>/:id` followed across connection drops. Every event is yielded exactly once, in
 * id order: after a drop the client waits (doubling from `initialDelayMs`, with jitter) and
 * reconnects with `Last-Event-ID` set to the last id it yielded; replayed ids at or below it are
 * skipped, and a gap (an id other than the next one) is a protocol error rather than a silent
 * loss. Ends after yielding `done` or `cancelled`, or on 204 (the cursor already is the terminal
 * event); throws JsonRpcError on `error`. An `error` frame without an id (the server could not
 * reach its store for too long) is a dropped connection: it reconnects later and resumes. 4xx answers (unknown id, bad cursor, expired) are not
 * retried. `break` or the signal closes the connection; the stream itself keeps running.
 */
export class DurableStreamAttachment<T = unknown> implements AsyncIterableIterator<DurableStreamEvent<T>> {
  /** The id of the last event yielded: pass it as `lastEventId` to resume later elsewhere. */
  lastEventId: number | undefined;
  /** Connections opened so far (1 + reconnects). */
  connections = 0;
  private readonly generator: AsyncGenerator<DurableStreamEvent<T>, undefined, undefined>;
  private scope: RequestScope | undefined;

  /** @internal made by `JsonRpcClient.attach()`. */
  constructor(private readonly request: AttachRequest) {
    const start = request.options.lastEventId;
    if (start !== undefined) {
      const n = typeof start === 'number' ? start : /^(0|[1-9][0-9]*)$/.test(start) ? Number(start) : NaN;
      if (!Number.isSafeInteger(n) || n < 0) throw new TypeError(`lastEventId must be a non-negative integer, got ${JSON.stringify(start)}`);
      this.lastEventId = n;
    }
    this.generator = this.run();
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<DurableStreamEvent<T>, undefined>> {
    return this.generator.next();
  }

  return(): Promise<IteratorResult<DurableStreamEvent<T>, undefined>> {
    this.scope?.abort();
    return this.generator.return(undefined);
  }

  throw(error?: unknown): Promise<IteratorResult<DurableStreamEvent<T>, undefined>> {
    this.scope?.abort();
    return this.generator.throw(error);
  }

  private async *run(): AsyncGenerator<DurableStreamEvent<T>, undefined, undefined> {
    const { url, settings, options } = this.request;
    const caller = options.signal;
    const initialDelay = options.reconnect?.initialDelayMs ?? 250;
    const maxDelay = options.reconnect?.maxDelayMs ?? 10_000;
    const maxAttempts = options.reconnect?.maxAttempts ?? 10;
    let baseDelay = initialDelay;
    let failures = 0;
    for (;;) {
      const scope = new RequestScope(url, caller, settings.idleTimeoutMs, true);
      this.scope = scope;
      let lastFailure: unknown;
      let finished = false;
      try {
        const headers = await this.request.headers();
        headers.set('accept', STREAM_MEDIA_TYPES.sse);
        if (this.lastEventId !== undefined) headers.set(RpcHeader.LastEventId, String(this.lastEventId));
        let res: Response | undefined;
        this.connections++;
        try {
          res = await settings.fetch(url, { method: 'GET', headers, signal: scope.signal, cache: 'no-store' });
        } catch (cause) {
          if (caller?.aborted) throw caller.reason;
          lastFailure = scope.failure(cause, 'GET');
        }
        if (res !== undefined) {
          const contentType = res.headers.get('content-type');
          if (res.status === 204) {
            discardBody(res);
            finished = true;
            return undefined;
          }
          if (!res.ok) {
            const error = await failedAnswer(res, url, settings.maxResponseBytes, scope);
            if (!isRetryableStatus(res.status)) throw error;
            lastFailure = error;
          } else if (mediaTypeOf(contentType) !== STREAM_MEDIA_TYPES.sse || res.body === null) {
            discardBody(res);
            throw new JsonRpcProtocolError(`expected text/event-stream, got Content-Type ${JSON.stringify(contentType)}`, {
              url,
              status: res.status,
              contentType,
            });
          } else {
            const decoder = new SseEventDecoder({ maxFrameBytes: settings.maxFrameBytes, url, contentType }, 'durable SSE');
            const reader = res.body.getReader();
            const events: SseEvent[] = [];
            reading: for (;;) {
              let step: ReadableStreamReadResult<Uint8Array>;
              try {
                step = await reader.read();
              } catch (cause) {
                if (caller?.aborted) throw caller.reason;
                lastFailure = new JsonRpcStreamTruncatedError(`connection to ${url} lost: ${describeCause(cause)}`, url, 0, { cause });
                break;
              }
              if (step.done) decoder.finish(events);
              else {
                scope.touch();
                decoder.decode(step.value, events);
              }
              if (decoder.retryMs !== undefined) baseDelay = decoder.retryMs;
              for (let i = 0; i < events.length; i++) {
                // The SSE dialect's final `event: end` (no id) follows the terminal event we stop at.
                if (events[i].event === 'end') continue;
                // An `error` without an id is no event of the stream: the server could not reach its
                // store for a while. Reconnect later and resume, like after a dropped connection.
                if (events[i].event === 'error' && events[i].id === undefined) {
                  lastFailure = serverFailure(events[i], url, res.status);
                  break reading;
                }
                const event = this.accept(events[i], url);
                if (event === undefined) continue;
                failures = 0;
                if (event.event === 'error') {
                  finished = true;
                  const error = (event.data as { error?: unknown } | null)?.error;
                  if (!isErrorObject(error)) throw new JsonRpcProtocolError(`event ${event.id} (error) carries no {"error":{code,message}}`, { url, snippet: JSON.stringify(event.data) });
                  throw new JsonRpcError(error, null, res.status);
                }
                yield event;
                if (event.event === 'done' || event.event === 'cancelled') {
                  finished = true;
                  return undefined;
                }
              }
              if (step.done) {
                lastFailure = new JsonRpcStreamTruncatedError(`${url} ended before a terminal event`, url, 0);
                break;
              }
              events.length = 0;
            }
          }
        }
      } finally {
        if (!finished) scope.abort();
        scope.dispose();
      }
      failures++;
      if (failures > maxAttempts) {
        const detail = lastFailure instanceof Error ? lastFailure.message : String(lastFailure);
        throw new JsonRpcTransportError(`gave up on ${url} after ${maxAttempts} failed reconnects: ${detail}`, url, { cause: lastFailure });
      }
      const delay = Math.min(maxDelay, baseDelay * 2 ** (failures - 1));
      await sleep(delay * (0.5 + Math.random() / 2), caller);
    }
  }

  /** Validates an event's id against the cursor: undefined for a replayed duplicate. */
  private accept(raw: SseEvent, url: string): DurableStreamEvent<T> | undefined {
    const id = raw.id !== undefined && /^[1-9][0-9]*$/.test(raw.id) ? Number(raw.id) : NaN;
    if (!Number.isSafeInteger(id)) {
      throw new JsonRpcProtocolError(`durable event without a positive integer id (id: ${JSON.stringify(raw.id)})`, { url, snippet: raw.data });
    }
    const cursor = this.lastEventId ?? 0;
    if (id <= cursor) return undefined;
    if (id !== cursor + 1) {
      throw new JsonRpcProtocolError(`durable event ${id} follows ${cursor}: events ${cursor + 1}..${id - 1} were skipped by the server`, { url });
    }
    let data: unknown;
    try {
      data = raw.data === '' ? null : JSON.parse(raw.data);
    } catch (cause) {
      throw new JsonRpcProtocolError(`durable event ${id} data is not JSON`, { url, snippet: raw.data, cause });
    }
    this.lastEventId = id;
    return { id, event: raw.event ?? 'chunk', data: data as T };
  }
}

/** The error an id-less `error` frame carries (`Stream store unavailable`), as a JsonRpcError. */
function serverFailure(raw: SseEvent, url: string, status: number): Error {
  let error: unknown;
  try {
    error = (JSON.parse(raw.data) as { error?: unknown } | null)?.error;
  } catch {
    error = undefined;
  }
  return isErrorObject(error)
    ? new JsonRpcError(error, null, status)
    : new JsonRpcProtocolError('an error frame without an id carries no {"error":{code,message}}', { url, snippet: raw.data });
}

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
