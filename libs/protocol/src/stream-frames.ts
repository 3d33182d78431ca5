/**
 * Wire framing of the three stream formats (docs/streaming.md, "Wire format"). Pure functions and frozen objects: no
 * I/O. The server's live stream route and its durable attach route write with these encoders;
 * the client's decoders read what they write (a round-trip test holds them together).
 */
import { isErrorObject, type RpcErrorObject } from './envelope.js';
import { serializeErrorObject } from './response.js';
import { escapeStreamJson } from './stream-json.js';
import { StreamFormat, STREAM_MEDIA_TYPES } from './stream-format.js';

/** How one format frames a stream. `rowJson` is single-line JSON from `serializeStreamRow`. */
export interface StreamFrameEncoder {
  readonly format: StreamFormat;
  readonly contentType: string;
  /** Written together with the headers, before any row (`[` for a JSON array). */
  readonly preamble: string;
  /** The `index`-th row (from 0); `fields` are SSE `id:`/`event:`, ignored by other formats. */
  row(rowJson: string, index: number, fields?: SseEventFields): string;
  /**
   * The in-band error frame after `rowsWritten` rows; the epilogue follows it. `errorJson` is an
   * error object already serialised by `encodeErrorObject` (a stored durable `error` event keeps it).
   */
  error(errorJson: string, rowsWritten: number): string;
  /** Written last, after the final row or the error frame. */
  readonly epilogue: string;
  /** What to send while idle so proxies keep the connection; undefined when the format has none. */
  readonly keepAlive: string | undefined;
}

// ---------------------------------------------------------------------------------------------
// SSE (https://html.spec.whatwg.org/multipage/server-sent-events.html)

export interface SseEventFields {
  /** `event:` field; omitted means the browser's default `message`. */
  event?: string;
  /** `id:` field, which the browser sends back as `Last-Event-ID` when it reconnects. */
  id?: string | number;
}

const LINE_BREAK = /\r\n|\r|\n/;

/**
 * One SSE event. Multi-line `data` becomes one `data:` line per line, as the spec requires;
 * JSON from `serializeStreamRow` is always one line, so the common case is a single concat.
 * `event` and `id` must not contain line breaks (they would inject fields), nor `id` a NUL.
 */
export function encodeSseEvent(data: string, fields?: SseEventFields): string {
  let head = '';
  if (fields) {
    if (fields.id !== undefined) {
      const id = String(fields.id);
      if (LINE_BREAK.test(id) || id.includes('\0')) throw new TypeError('SSE event id must not contain line breaks or NUL');
      head += `id: ${id}\n`;
    }
    if (fields.event !== undefined) {
      if (LINE_BREAK.test(fields.event)) throw new TypeError('SSE event name must not contain line breaks');
      head += `event: ${fields.event}\n`;
    }
  }
  const body = LINE_BREAK.test(data) ? data.split(LINE_BREAK).join('\ndata: ') : data;
  return `${head}data: ${body}\n\n`;
}

/** How long a browser's EventSource waits before reconnecting (the first frame of a resumable stream). */
export function encodeSseRetry(retryMs: number): string {
  if (!Number.isSafeInteger(retryMs) || retryMs < 0) throw new TypeError('SSE retry must be a non-negative integer of ms');
  return `retry: ${retryMs}\n\n`;
}

/** A comment line: ignored by EventSource, but it keeps proxies and load balancers from timing out. */
export const SSE_KEEP_ALIVE = ':\n\n';

/**
 * An error object as stream JSON: integer code checked (a TypeError otherwise, see
 * `serializeErrorObject`), `<`, U+2028 and U+2029 escaped like every row.
 */
export function encodeErrorObject(error: RpcErrorObject): string {
  return escapeStreamJson(serializeErrorObject(error));
}

/** `{"error":{...}}`, the body of NDJSON and SSE error frames (and of a durable `error` event). */
export function encodeErrorRow(error: RpcErrorObject): string {
  return errorRowOfJson(encodeErrorObject(error));
}

function errorRowOfJson(errorJson: string): string {
  return `{"error":${errorJson}}`;
}

const ERROR_ROW_HEAD = '{"error":';

/**
 * The error object JSON inside an error row written by `encodeErrorRow`, without parsing it:
 * stored durable `error` events are served in any format by slicing, never by a JSON round trip.
 * Undefined when `row` is not such a row.
 */
export function errorJsonOfErrorRow(row: string): string | undefined {
  return row.startsWith(ERROR_ROW_HEAD) && row.endsWith('}') ? row.slice(ERROR_ROW_HEAD.length, -1) : undefined;
}

const hasOwn = Object.prototype.hasOwnProperty;

/**
 * What a decoded stream value is, by the exact frame shapes of docs/streaming.md: an in-band error frame
 * (`{"<key>": <error object>}` and nothing else), a row, or a malformed error frame — the sole
 * member `<key>` holding an object with a `code` or a `message` that is not an error object (say
 * a code of 1.5). A decoder must not pass the last one on as a row: the stream would seem to
 * succeed. (`{"error":{"reason":"x"}}` stays a row: it does not try to be an error.)
 */
export function classifyStreamValue(
  value: unknown,
  key: 'error' | '_error',
): { kind: 'row' } | { kind: 'error'; error: RpcErrorObject } | { kind: 'malformed-error' } {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || !hasOwn.call(value, key)) return { kind: 'row' };
  for (const k in value) if (k !== key) return { kind: 'row' };
  const error = (value as Record<string, unknown>)[key];
  if (isErrorObject(error)) return { kind: 'error', error };
  const attempted = error !== null && typeof error === 'object' && (hasOwn.call(error, 'code') || hasOwn.call(error, 'message'));
  return attempted ? { kind: 'malformed-error' } : { kind: 'row' };
}

export const SSE_ERROR_EVENT = 'error';
export const SSE_END_EVENT = 'end';
/** Ends every SSE stream, after an error frame too, so EventSource clients close instead of reconnecting. */
export const SSE_END_FRAME = encodeSseEvent('{}', { event: SSE_END_EVENT });

export const sseEncoder: StreamFrameEncoder = Object.freeze({
  format: StreamFormat.Sse,
  contentType: `${STREAM_MEDIA_TYPES.sse}; charset=utf-8`,
  preamble: '',
  row: (rowJson: string, _index: number, fields?: SseEventFields) => (fields ? encodeSseEvent(rowJson, fields) : `data: ${rowJson}\n\n`),
  error: (errorJson: string) => encodeSseEvent(errorRowOfJson(errorJson), { event: SSE_ERROR_EVENT }),
  epilogue: SSE_END_FRAME,
  keepAlive: SSE_KEEP_ALIVE,
});

// ---------------------------------------------------------------------------------------------
// NDJSON (one JSON value per line)

export const ndjsonEncoder: StreamFrameEncoder = Object.freeze({
  format: StreamFormat.Ndjson,
  contentType: `${STREAM_MEDIA_TYPES.ndjson}; charset=utf-8`,
  preamble: '',
  row: (rowJson: string) => `${rowJson}\n`,
  error: (errorJson: string) => `${errorRowOfJson(errorJson)}\n`,
  epilogue: '',
  keepAlive: undefined,
});

// ---------------------------------------------------------------------------------------------
// JSON array, written progressively: `[` row `,` row ... `]`

export const jsonArrayEncoder: StreamFrameEncoder = Object.freeze({
  format: StreamFormat.JsonArray,
  contentType: `${STREAM_MEDIA_TYPES.jsonArray}; charset=utf-8`,
  preamble: '[',
  row: (rowJson: string, index: number) => (index === 0 ? rowJson : `,${rowJson}`),
  error: (errorJson: string, rowsWritten: number) => `${rowsWritten === 0 ? '' : ','}{"_error":${errorJson}}`,
  epilogue: ']',
  keepAlive: undefined,
});

const ENCODERS: Readonly<Record<StreamFormat, StreamFrameEncoder>> = Object.freeze({
  [StreamFormat.Ndjson]: ndjsonEncoder,
  [StreamFormat.Sse]: sseEncoder,
  [StreamFormat.JsonArray]: jsonArrayEncoder,
});

/** The encoder of a format; undefined for a value that is not a `StreamFormat`. */
export function frameEncoderFor(format: StreamFormat): StreamFrameEncoder | undefined {
  return Object.prototype.hasOwnProperty.call(ENCODERS, format) ? ENCODERS[format] : undefined;
}
