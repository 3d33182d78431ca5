import type { DurableCancelAnswer, DurableEventsPage, DurableStreamList, DurableStreamSummary } from '@nest-jsonrpc/protocol';
import { DEFAULT_MAX_FRAME_BYTES } from '../decoding/stream-frame.js';
import { STREAM_ACCEPT } from '../decoding/decoder-for-content-type.js';
import { JsonRpcError, JsonRpcProtocolError } from '../errors/client-errors.js';
import {
  notJsonRpc,
  parseAnswer,
  requestObject,
  responseObjectOf,
  settleCall,
  type AnswerContext,
  type JsonRpcParams,
  type JsonRpcRequestObject,
} from '../protocol/json-rpc-envelope.js';
import { discardBody, readBodyText } from '../transport/http-body.js';
import { RequestScope } from '../transport/request-scope.js';
import { DurableStreamAttachment, type AttachOptions } from './durable-stream-attachment.js';
import type { ExchangeSettings } from './exchange-settings.js';
import { failedAnswer } from './failed-answer.js';
import { JsonRpcStream } from './json-rpc-stream.js';
import { addTraceContext } from '../transport/trace-context.js';

export type HeadersSource = HeadersInit | (() => HeadersInit | Promise<HeadersInit>);

export interface JsonRpcClientOptions {
  /** The JSON-RPC endpoint, e.g. `http://127.0.0.1:3000/rpc` (relative URLs work in browsers). */
  url: string;
  /** The streaming endpoint. Default: `<url>/stream`. */
  streamUrl?: string;
  /** The durable streams REST/SSE base. Default: `<url>/streams`. */
  streamsUrl?: string;
  /** Sent with every request; a function is called per request (e.g. to refresh a token). */
  headers?: HeadersSource;
  /** The fetch to use (default: the global one), e.g. to add cookies, retries or a test double. */
  fetch?: typeof fetch;
  /** Calls, batches, notifications and REST requests fail with JsonRpcTimeoutError after this many ms. Default 0: none. */
  timeoutMs?: number;
  /** Streams and attachments fail (attachments reconnect) after this many ms without a byte. Default 0: none. */
  idleTimeoutMs?: number;
  /** Most bytes read for one non-stream answer. Default 64 MiB. */
  maxResponseBytes?: number;
  /** Most bytes buffered for one incomplete stream frame (NDJSON line, SSE event, array element). Default 16 MiB. */
  maxFrameBytes?: number;
  /** Send `traceparent` when an OpenTelemetry span is active (the app registered `@opentelemetry/api`'s context manager). Default true. */
  traceContext?: boolean;
}

export interface CallOptions {
  signal?: AbortSignal;
  /** Merged over the client's headers for this request. */
  headers?: HeadersInit;
  /** Overrides the client's `timeoutMs` for this request. */
  timeoutMs?: number;
}

export interface StreamCallOptions {
  signal?: AbortSignal;
  headers?: HeadersInit;
  /** Overrides the client's `idleTimeoutMs` for this stream. */
  idleTimeoutMs?: number;
}

export interface BatchEntry {
  method: string;
  params?: JsonRpcParams;
  /** Sent without an id: the server answers nothing, the entry settles fulfilled with undefined. */
  notification?: boolean;
}

/** One settled batch entry, shaped like `Promise.allSettled`'s. */
export type BatchSettledResult<T = unknown> =
  | { status: 'fulfilled'; value: T }
  | { status: 'rejected'; reason: JsonRpcError | JsonRpcProtocolError };

// The durable routes' REST bodies are the wire contract's own types (the server answers with them).
export type { DurableCancelAnswer, DurableEventsPage, DurableStreamList, DurableStreamSummary };

const JSON_CONTENT_TYPE = 'application/json';

/**
 * A fetch-based JSON-RPC 2.0 client for `@nest-jsonrpc/server`, for Node 20+ and browsers: it uses
 * only `fetch`, `ReadableStream`, `TextDecoder` and `AbortController`.
 */
export class JsonRpcClient {
  readonly url: string;
  readonly streamUrl: string;
  readonly streamsUrl: string;
  private readonly settings: ExchangeSettings;
  private readonly headersSource: HeadersSource | undefined;
  private readonly traceContext: boolean;
  private nextId = 1;

  constructor(options: JsonRpcClientOptions) {
    if (typeof options?.url !== 'string' || options.url === '') throw new TypeError('JsonRpcClient: `url` is required');
    this.url = options.url;
    const base = options.url.replace(/\/+$/, '');
    this.streamUrl = options.streamUrl ?? `${base}/stream`;
    this.streamsUrl = (options.streamsUrl ?? `${base}/streams`).replace(/\/+$/, '');
    this.headersSource = options.headers;
    this.traceContext = options.traceContext ?? true;
    const globalFetch = globalThis.fetch;
    this.settings = Object.freeze({
      // A browser's fetch throws "Illegal invocation" when called off `window`: bind it.
      fetch: options.fetch ?? globalFetch.bind(globalThis),
      timeoutMs: options.timeoutMs ?? 0,
      idleTimeoutMs: options.idleTimeoutMs ?? 0,
      maxResponseBytes: options.maxResponseBytes ?? 64 * 1024 * 1024,
      maxFrameBytes: options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES,
    });
  }

  /** Calls `method`; resolves its result or rejects with JsonRpcError (or a transport/protocol error). */
  async call<T = unknown>(method: string, params?: JsonRpcParams, options: CallOptions = {}): Promise<T> {
    const id = this.nextId++;
    const body = JSON.stringify(requestObject(method, params, id));
    const answer = await this.post(body, options, false);
    if (answer.status === 204 || answer.text === '') throw notJsonRpc(`no answer body (HTTP ${answer.status}) to call ${id}`, answer);
    return settleCall(parseAnswer(answer), id, answer) as T;
  }

  /** Sends a notification: no id, no answer. Resolves once the server has accepted it. */
  async notify(method: string, params?: JsonRpcParams, options: CallOptions = {}): Promise<void> {
    const body = JSON.stringify(requestObject(method, params, undefined));
    const answer = await this.post(body, options, true);
    if (answer.status >= 300) {
      // Refused as a whole (too large, unreadable): the server says why with an id-null error.
      const response = responseObjectOf(parseAnswer(answer));
      if (response !== undefined && !response.ok) throw new JsonRpcError(response.error, response.id, answer.status);
      throw notJsonRpc(`HTTP ${answer.status} for a notification`, answer);
    }
  }

  /**
   * Sends several calls and notifications in one request. Resolves an array aligned with `entries`,
   * shaped like `Promise.allSettled`: each call fulfilled with its result or rejected with its
   * JsonRpcError; a notification fulfilled with undefined. Rejects as a whole only when the batch
   * as such failed (transport, a non-JSON-RPC answer, or one error for the whole batch such as
   * "batch too large"). An empty batch resolves `[]` without a request (the spec forbids sending one).
   */
  async batch<T = unknown>(entries: readonly BatchEntry[], options: CallOptions = {}): Promise<BatchSettledResult<T>[]> {
    if (entries.length === 0) return [];
    const requests: JsonRpcRequestObject[] = new Array(entries.length);
    const ids: Array<number | undefined> = new Array(entries.length);
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i];
      const id = entry.notification ? undefined : this.nextId++;
      ids[i] = id;
      requests[i] = requestObject(entry.method, entry.params, id);
    }
    const notificationsOnly = ids.every((id) => id === undefined);
    const answer = await this.post(JSON.stringify(requests), options, notificationsOnly);
    const settled: BatchSettledResult<T>[] = new Array(entries.length);
    if (notificationsOnly && answer.status < 300) {
      for (let i = 0; i < entries.length; i++) settled[i] = { status: 'fulfilled', value: undefined as T };
      return settled;
    }
    if (answer.text === '') throw notJsonRpc(`no answer body (HTTP ${answer.status}) to a batch with calls`, answer);
    const value = parseAnswer(answer);
    if (!Array.isArray(value)) {
      // One error for the whole batch (too large, invalid): the server could not run any of it.
      const response = responseObjectOf(value);
      if (response !== undefined && !response.ok) throw new JsonRpcError(response.error, response.id, answer.status);
      throw notJsonRpc('expected an array of response objects for a batch', answer);
    }
    const byId = new Map<unknown, ReturnType<typeof responseObjectOf>>();
    for (const item of value) {
      const response = responseObjectOf(item);
      if (response === undefined) throw notJsonRpc('a batch answer item is not a response object', { ...answer, text: JSON.stringify(item) });
      if (response.id === null) continue; // an item the server could not attribute; reported below
      if (byId.has(response.id)) throw notJsonRpc(`two answers with id ${JSON.stringify(response.id)}`, answer);
      byId.set(response.id, response);
    }
    for (let i = 0; i < entries.length; i++) {
      const id = ids[i];
      if (id === undefined) {
        settled[i] = { status: 'fulfilled', value: undefined as T };
        continue;
      }
      const response = byId.get(id);
      if (response === undefined) settled[i] = { status: 'rejected', reason: notJsonRpc(`the batch answer has no response for id ${id}`, answer) };
      else if (response.ok) settled[i] = { status: 'fulfilled', value: response.result as T };
      else settled[i] = { status: 'rejected', reason: new JsonRpcError(response.error, response.id, answer.status) };
    }
    return settled;
  }

  /** Calls a stream method on `streamUrl`; iterate the result to receive its rows. See JsonRpcStream. */
  stream<T = unknown>(method: string, params?: JsonRpcParams, options: StreamCallOptions = {}): JsonRpcStream<T> {
    const id = this.nextId++;
    const body = JSON.stringify(requestObject(method, params, id));
    const settings =
      options.idleTimeoutMs === undefined ? this.settings : Object.freeze({ ...this.settings, idleTimeoutMs: options.idleTimeoutMs });
    return new JsonRpcStream<T>({
      url: this.streamUrl,
      id,
      body,
      signal: options.signal,
      settings,
      headers: async () => {
        const headers = await this.headersFor(options.headers);
        headers.set('content-type', JSON_CONTENT_TYPE);
        headers.set('accept', STREAM_ACCEPT);
        return headers;
      },
    });
  }

  /** Follows a durable stream's events, resuming across drops. See DurableStreamAttachment. */
  attach<T = unknown>(streamId: string, options: AttachOptions = {}): DurableStreamAttachment<T> {
    return new DurableStreamAttachment<T>({
      url: this.streamUrlOf(streamId),
      options,
      settings: this.settings,
      headers: () => this.headersFor(options.headers),
    });
  }

  /** Cancels a durable stream (`DELETE <streamsUrl>/:id`); idempotent. Resolves the server's `{stream_id, status}`. */
  async cancel(streamId: string, options: CallOptions = {}): Promise<DurableCancelAnswer> {
    return (await this.rest('DELETE', this.streamUrlOf(streamId), options)) as DurableCancelAnswer;
  }

  /** Lists the caller's durable streams (`GET <streamsUrl>`), optionally by status. */
  async list(options: CallOptions & { status?: string } = {}): Promise<DurableStreamSummary[]> {
    const query = options.status === undefined ? '' : `?status=${encodeURIComponent(options.status)}`;
    const body = (await this.rest('GET', this.streamsUrl + query, options)) as Partial<DurableStreamList> | undefined;
    if (!Array.isArray(body?.streams)) throw new JsonRpcProtocolError('expected {"streams":[...]}', { url: this.streamsUrl, snippet: JSON.stringify(body) });
    return body.streams;
  }

  /** Reads stored events without SSE (`GET <streamsUrl>/:id/events?after=N&limit=M`). */
  async events<T = unknown>(
    streamId: string,
    options: CallOptions & { after?: number; limit?: number } = {},
  ): Promise<DurableEventsPage<T>['events']> {
    const query: string[] = [];
    if (options.after !== undefined) query.push(`after=${encodeURIComponent(options.after)}`);
    if (options.limit !== undefined) query.push(`limit=${encodeURIComponent(options.limit)}`);
    const url = `${this.streamUrlOf(streamId)}/events${query.length ? `?${query.join('&')}` : ''}`;
    const body = (await this.rest('GET', url, options)) as Partial<DurableEventsPage<T>> | undefined;
    if (!Array.isArray(body?.events)) throw new JsonRpcProtocolError('expected {"events":[...]}', { url, snippet: JSON.stringify(body) });
    return body.events;
  }

  private streamUrlOf(streamId: string): string {
    if (typeof streamId !== 'string' || streamId === '') throw new TypeError('streamId must be a non-empty string');
    return `${this.streamsUrl}/${encodeURIComponent(streamId)}`;
  }

  private async headersFor(extra: HeadersInit | undefined): Promise<Headers> {
    const source = this.headersSource;
    const base = typeof source === 'function' ? await source() : source;
    const headers = new Headers(base);
    if (extra !== undefined) new Headers(extra).forEach((value, name) => headers.set(name, value));
    if (this.traceContext) addTraceContext(headers);
    return headers;
  }

  /** POSTs a JSON-RPC body to `url`; returns the answer text, or throws for failed exchanges. */
  private async post(body: string, options: CallOptions, notificationsOnly: boolean): Promise<AnswerContext> {
    const url = this.url;
    const scope = new RequestScope(url, options.signal, options.timeoutMs ?? this.settings.timeoutMs, false);
    try {
      const headers = await this.headersFor(options.headers);
      headers.set('content-type', JSON_CONTENT_TYPE);
      headers.set('accept', JSON_CONTENT_TYPE);
      let res: Response;
      try {
        res = await this.settings.fetch(url, { method: 'POST', headers, body, signal: scope.signal });
      } catch (cause) {
        throw scope.failure(cause, 'POST');
      }
      const contentType = res.headers.get('content-type');
      if (notificationsOnly && res.ok) {
        // Nothing to read: the server owes no answer to notifications (normally 204).
        discardBody(res);
        return { url, status: res.status, contentType, text: '' };
      }
      const text = await readBodyText(res, url, this.settings.maxResponseBytes, scope);
      if (!res.ok) {
        // With `httpStatus.enabled` the server maps RPC errors to 4xx/5xx, and a batch takes its
        // worst item's status while still carrying every answer: such bodies are read as usual.
        // Anything else (a proxy's 502 page, 413 from a gateway) is not a JSON-RPC answer.
        const value = safeParse(text);
        if (!Array.isArray(value) && responseObjectOf(value) === undefined) {
          throw notJsonRpc(`HTTP ${res.status} ${res.statusText}`.trim(), { url, status: res.status, contentType, text });
        }
      }
      return { url, status: res.status, contentType, text };
    } finally {
      scope.dispose();
    }
  }

  /** One REST exchange with a durable streams route: the parsed JSON body, or the error it carries. */
  private async rest(method: 'GET' | 'DELETE', url: string, options: CallOptions): Promise<unknown> {
    const scope = new RequestScope(url, options.signal, options.timeoutMs ?? this.settings.timeoutMs, false);
    try {
      const headers = await this.headersFor(options.headers);
      headers.set('accept', JSON_CONTENT_TYPE);
      let res: Response;
      try {
        res = await this.settings.fetch(url, { method, headers, signal: scope.signal });
      } catch (cause) {
        throw scope.failure(cause, method);
      }
      if (!res.ok) throw await failedAnswer(res, url, this.settings.maxResponseBytes, scope);
      const text = await readBodyText(res, url, this.settings.maxResponseBytes, scope);
      return parseAnswer({ url, status: res.status, contentType: res.headers.get('content-type'), text });
    } finally {
      scope.dispose();
    }
  }
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
