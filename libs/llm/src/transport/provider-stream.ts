/**
 * One streaming provider call, pulled by the caller: the request goes out at the first `next()`;
 * an HTTP error answer throws there, before any event; then each `next()` that finds no event
 * ready reads one more network chunk (nothing is read ahead, so a slow consumer slows the upstream
 * read through TCP flow control). Aborting the caller's signal, or leaving the loop early, aborts
 * the request, which closes the upstream connection.
 */
import { abortError, LlmProviderError } from '../model/errors.js';
import type { StreamItem, TurnParser } from './turn-parser.js';

/** What a provider adapter sends, and how it reads its error answers. */
export interface ProviderHttpCall {
  provider: string;
  url: string;
  headers: Record<string, string>;
  body: string;
  fetch: typeof fetch;
  /** The provider's type and message in an error answer's (parsed) body. */
  describeError(status: number, body: unknown, headers: Headers): { type: string; message: string };
}

/** Turns the response body into provider events handed to the parser, one network read at a time. */
export interface WireDecoder {
  /** Splits the byte stream into the units `feed` takes (identity for SSE, whole frames for AWS). */
  units(body: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array>;
  feed(unit: Uint8Array): void;
  end(): void;
}

/** Error answers are small; a hostile one is read up to this many bytes. */
const MAX_ERROR_BODY_BYTES = 1 << 20;

export async function* runProviderStream(
  call: ProviderHttpCall,
  signal: AbortSignal | undefined,
  parser: TurnParser,
  decoder: WireDecoder,
): AsyncGenerator<StreamItem, void, undefined> {
  if (signal?.aborted) throw abortError(signal);
  const controller = new AbortController();
  const onAbort = () => controller.abort(signal!.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  let completed = false;
  try {
    let response: Response;
    try {
      response = await call.fetch(call.url, { method: 'POST', headers: call.headers, body: call.body, signal: controller.signal });
    } catch (error) {
      if (signal?.aborted) throw abortError(signal);
      throw error;
    }
    if (!response.ok) throw await httpError(call, response);
    if (!response.body) throw new LlmProviderError(call.provider, response.status, 'empty_body', 'The provider answered without a body', undefined);

    const units = decoder.units(bodyChunks(response.body))[Symbol.asyncIterator]();
    const out = parser.out;
    for (;;) {
      let next: IteratorResult<Uint8Array>;
      try {
        next = await units.next();
      } catch (error) {
        if (signal?.aborted) throw abortError(signal);
        throw error;
      }
      if (next.done) decoder.end();
      else decoder.feed(next.value);
      for (let i = 0; i < out.length; i++) yield out[i];
      out.length = 0;
      if (parser.error) throw parser.error;
      if (next.done) {
        completed = true;
        break;
      }
      // The turn is over before the body is: the rest is not read, and the request is aborted
      // below so the connection is released rather than left paused.
      if (parser.finished) break;
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
    // Leaving before the body ended (return(), a throw, an abort, a turn over early): close the
    // upstream connection now.
    if (!completed) controller.abort();
  }
}

/** The body's chunks as an async iterable that reads only when asked. */
async function* bodyChunks(body: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    reader.releaseLock();
  }
}

async function httpError(call: ProviderHttpCall, response: Response): Promise<LlmProviderError> {
  const text = await readLimited(response);
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON (a proxy's HTML page, plain text): keep the text.
  }
  const { type, message } = call.describeError(response.status, body, response.headers);
  return new LlmProviderError(call.provider, response.status, type, message, body);
}

async function readLimited(response: Response): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let bytes = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      bytes += value.byteLength;
      text += decoder.decode(value, { stream: true });
      if (bytes >= MAX_ERROR_BODY_BYTES) break;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return text + decoder.decode();
}

/** The usual fallback when an error body has no recognisable shape. */
export function genericErrorDescription(status: number, body: unknown): { type: string; message: string } {
  const text = typeof body === 'string' ? body.trim().slice(0, 500) : JSON.stringify(body)?.slice(0, 500);
  return { type: `http_${status}`, message: text ? `HTTP ${status}: ${text}` : `HTTP ${status}` };
}
