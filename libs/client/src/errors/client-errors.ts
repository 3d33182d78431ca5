import type { RpcErrorObject, RpcId } from '@nest-jsonrpc/protocol';
/**
 * Every way a call can fail, as distinct classes, so callers can branch with `instanceof`:
 *
 * - `JsonRpcError`: the server answered with a JSON-RPC error object (before or during a stream).
 * - `JsonRpcTransportError`: no usable answer arrived (connection refused or reset, DNS, CORS,
 *   timeout). `JsonRpcTimeoutError` and `JsonRpcStreamTruncatedError` are kinds of it.
 * - `JsonRpcProtocolError`: something answered, but not JSON-RPC (an HTML 502 page, a wrong
 *   content type, garbage bytes, a mismatched id). `JsonRpcResponseTooLargeError` is a kind of it.
 * - `ResultChunkError`: `result_chunk` rows that cannot be reassembled.
 *
 * Aborting a caller's `signal` is not wrapped: the promise rejects with the signal's own reason
 * (an `AbortError` DOMException unless the caller passed another), as `fetch` itself does.
 */

/** How much of an unexpected body an error keeps, so a hostile answer cannot bloat error logs. */
export const BODY_SNIPPET_CHARS = 512;

/** A JSON-RPC id (spec §4): `RpcId` of `@nest-jsonrpc/protocol`. */
export type JsonRpcId = RpcId;

/** The JSON-RPC error object sent by the server (spec §5.1): `RpcErrorObject` of `@nest-jsonrpc/protocol`. */
export type JsonRpcErrorObject = RpcErrorObject;

/** The server answered with a JSON-RPC error: `code`, `message`, optional `data`, and the call's `id`. */
export class JsonRpcError extends Error {
  override readonly name = 'JsonRpcError';
  readonly code: number;
  readonly data: unknown;
  readonly id: JsonRpcId;
  /** HTTP status of the answer that carried this error, when there was one. */
  readonly status: number | undefined;

  constructor(error: JsonRpcErrorObject, id: JsonRpcId, status?: number) {
    super(error.message);
    this.code = error.code;
    this.data = error.data;
    this.id = id;
    this.status = status;
  }

  /** The error object as it came over the wire. */
  toJSON(): JsonRpcErrorObject & { id: JsonRpcId } {
    const out: JsonRpcErrorObject & { id: JsonRpcId } = { code: this.code, message: this.message, id: this.id };
    if (this.data !== undefined) out.data = this.data;
    return out;
  }
}

/** No usable answer arrived: the request never reached the server or the connection failed. */
export class JsonRpcTransportError extends Error {
  override readonly name: string = 'JsonRpcTransportError';
  readonly url: string;

  constructor(message: string, url: string, options?: { cause?: unknown }) {
    super(message, options);
    this.url = url;
  }
}

/** No answer (or, on a stream, no byte) within the configured time. */
export class JsonRpcTimeoutError extends JsonRpcTransportError {
  override readonly name: string = 'JsonRpcTimeoutError';
  readonly timeoutMs: number;

  constructor(message: string, url: string, timeoutMs: number) {
    super(message, url);
    this.timeoutMs = timeoutMs;
  }
}

/**
 * A stream stopped before its end: the connection dropped, or the body ended without the format's
 * end marker (SSE `event: end`, the JSON array's `]`, NDJSON's final newline). Rows yielded before
 * it are real; rows after it were lost.
 */
export class JsonRpcStreamTruncatedError extends JsonRpcTransportError {
  override readonly name: string = 'JsonRpcStreamTruncatedError';
  /** Rows (or events) delivered before the stream was cut off. */
  readonly rowsReceived: number;

  constructor(message: string, url: string, rowsReceived: number, options?: { cause?: unknown }) {
    super(message, url, options);
    this.rowsReceived = rowsReceived;
  }
}

/** Something answered, but not with JSON-RPC: wrong status/content type, unparsable or mis-shaped body. */
export class JsonRpcProtocolError extends Error {
  override readonly name: string = 'JsonRpcProtocolError';
  readonly url: string;
  readonly status: number | undefined;
  readonly contentType: string | undefined;
  /** The start of the offending body or frame (at most BODY_SNIPPET_CHARS characters). */
  readonly snippet: string | undefined;

  constructor(
    message: string,
    details: { url: string; status?: number; contentType?: string | null; snippet?: string; cause?: unknown },
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.url = details.url;
    this.status = details.status;
    this.contentType = details.contentType ?? undefined;
    this.snippet = details.snippet === undefined ? undefined : details.snippet.slice(0, BODY_SNIPPET_CHARS);
  }
}

/** The answer (or one frame of a stream) is larger than the client was told to buffer. */
export class JsonRpcResponseTooLargeError extends JsonRpcProtocolError {
  override readonly name: string = 'JsonRpcResponseTooLargeError';
  /** Which option set the bound: `maxResponseBytes` or `maxFrameBytes`. */
  readonly limit: 'maxResponseBytes' | 'maxFrameBytes';
  readonly limitBytes: number;

  constructor(
    limit: 'maxResponseBytes' | 'maxFrameBytes',
    limitBytes: number,
    details: { url: string; status?: number; contentType?: string | null; what: string },
  ) {
    super(`${details.what} exceeds ${limit} (${limitBytes} bytes); the client stopped reading`, details);
    this.limit = limit;
    this.limitBytes = limitBytes;
  }
}

/** `result_chunk` rows that cannot be reassembled; always names the result and the chunk. */
export class ResultChunkError extends Error {
  override readonly name = 'ResultChunkError';
  readonly resultId: string | undefined;
  readonly chunkSeq: number | undefined;

  constructor(message: string, resultId: string | undefined, chunkSeq: number | undefined) {
    super(`${message} (result_id ${JSON.stringify(resultId)}, chunk_seq ${chunkSeq === undefined ? 'none' : chunkSeq})`);
    this.resultId = resultId;
    this.chunkSeq = chunkSeq;
  }
}
