/**
 * Wire framing of the three stream formats (DESIGN §4). Pure functions and frozen objects: no
 * Nest, no Fastify, no I/O, so the client and the durable-stream routes can reuse them.
 */
import { StreamFormat } from '../decorators/rpc-stream.decorator.js';
import type { RpcErrorObject } from '../protocol/envelope.js';
import { serializeErrorObject } from '../protocol/response.js';
import { escapeStreamJson } from './row-serializer.js';

/** How one format frames a stream. `rowJson` is single-line JSON from `serializeStreamRow`. */
export interface StreamFrameEncoder {
  readonly format: StreamFormat;
  readonly contentType: string;
  /** Written together with the headers, before any row (`[` for a JSON array). */
  readonly preamble: string;
  /** The `index`-th row (from 0); `fields` are SSE `id:`/`event:`, ignored by other formats. */
  row(rowJson: string, index: number, fields?: SseEventFields): string;
  /** The in-band error frame after `rowsWritten` rows; the epilogue follows it. */
  error(error: RpcErrorObject, rowsWritten: number): string;
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

/** A comment line: ignored by EventSource, but it keeps proxies and load balancers from timing out. */
export const SSE_KEEP_ALIVE = ':\n\n';

/** `{"error":{...}}`, the body of NDJSON and SSE error frames. */
export function encodeErrorRow(error: RpcErrorObject): string {
  return `{"error":${escapeStreamJson(serializeErrorObject(error))}}`;
}

export const SSE_ERROR_EVENT = 'error';
export const SSE_END_EVENT = 'end';
/** Ends every SSE stream, after an error frame too, so EventSource clients close instead of reconnecting. */
export const SSE_END_FRAME = encodeSseEvent('{}', { event: SSE_END_EVENT });

export const sseEncoder: StreamFrameEncoder = Object.freeze({
  format: StreamFormat.Sse,
  contentType: 'text/event-stream; charset=utf-8',
  preamble: '',
  row: (rowJson: string, _index: number, fields?: SseEventFields) => (fields ? encodeSseEvent(rowJson, fields) : `data: ${rowJson}\n\n`),
  error: (error: RpcErrorObject) => encodeSseEvent(encodeErrorRow(error), { event: SSE_ERROR_EVENT }),
  epilogue: SSE_END_FRAME,
  keepAlive: SSE_KEEP_ALIVE,
});

// ---------------------------------------------------------------------------------------------
// NDJSON (one JSON value per line)

export const ndjsonEncoder: StreamFrameEncoder = Object.freeze({
  format: StreamFormat.Ndjson,
  contentType: 'application/x-ndjson; charset=utf-8',
  preamble: '',
  row: (rowJson: string) => `${rowJson}\n`,
  error: (error: RpcErrorObject) => `${encodeErrorRow(error)}\n`,
  epilogue: '',
  keepAlive: undefined,
});

// ---------------------------------------------------------------------------------------------
// JSON array, written progressively: `[` row `,` row ... `]`

export const jsonArrayEncoder: StreamFrameEncoder = Object.freeze({
  format: StreamFormat.JsonArray,
  contentType: 'application/json; charset=utf-8',
  preamble: '[',
  row: (rowJson: string, index: number) => (index === 0 ? rowJson : `,${rowJson}`),
  error: (error: RpcErrorObject, rowsWritten: number) =>
    `${rowsWritten === 0 ? '' : ','}{"_error":${escapeStreamJson(serializeErrorObject(error))}}`,
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
