import { JsonRpcProtocolError, JsonRpcResponseTooLargeError } from '../errors/client-errors.js';
import { concatBytes } from '../decoding/stream-frame.js';
import type { RequestScope } from './request-scope.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Reads a whole answer body as UTF-8 text, never holding more than `maxBytes`: a declared
 * `Content-Length` over the bound is refused before reading, an undeclared one is cut off as
 * soon as it passes it. The connection is closed in both cases.
 */
export async function readBodyText(res: Response, url: string, maxBytes: number, scope: RequestScope): Promise<string> {
  const contentType = res.headers.get('content-type');
  const tooLarge = () =>
    new JsonRpcResponseTooLargeError('maxResponseBytes', maxBytes, { url, status: res.status, contentType, what: `the answer (HTTP ${res.status})` });
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (declared > maxBytes) {
    scope.abort();
    throw tooLarge();
  }
  if (res.body === null) return '';
  const reader = res.body.getReader();
  const parts: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      let step: ReadableStreamReadResult<Uint8Array>;
      try {
        step = await reader.read();
      } catch (cause) {
        throw scope.failure(cause, 'reading the answer from');
      }
      if (step.done) break;
      total += step.value.length;
      if (total > maxBytes) {
        scope.abort();
        throw tooLarge();
      }
      parts.push(step.value);
    }
  } finally {
    reader.releaseLock();
  }
  if (total === 0) return '';
  try {
    return utf8.decode(concatBytes(parts, total));
  } catch (cause) {
    throw new JsonRpcProtocolError(`the answer (HTTP ${res.status}) is not valid UTF-8`, { url, status: res.status, contentType, cause });
  }
}

/** Discards a body we do not need, closing the connection rather than reading it. */
export function discardBody(res: Response): void {
  if (res.body !== null && !res.bodyUsed) res.body.cancel().catch(() => undefined);
}
