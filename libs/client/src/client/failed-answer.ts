import { JsonRpcError, JsonRpcProtocolError } from '../errors/client-errors.js';
import { notJsonRpc, parseAnswer, responseObjectOf } from '../protocol/json-rpc-envelope.js';
import { readBodyText } from '../transport/http-body.js';
import type { RequestScope } from '../transport/request-scope.js';

/**
 * The error for a non-2xx answer: the JSON-RPC error it carries (a stream's pre-stream error, a
 * REST route's `{"error":{code,message}}`), else a protocol error quoting the body (a proxy's
 * HTML page, a load balancer's 503).
 */
export async function failedAnswer(res: Response, url: string, maxBytes: number, scope: RequestScope): Promise<Error> {
  const contentType = res.headers.get('content-type');
  const text = await readBodyText(res, url, maxBytes, scope);
  const answer = { url, status: res.status, contentType, text };
  let value: unknown;
  try {
    value = parseAnswer(answer);
  } catch (error) {
    return error as JsonRpcProtocolError;
  }
  const response = responseObjectOf(value);
  if (response !== undefined && !response.ok) return new JsonRpcError(response.error, response.id, res.status);
  // REST routes answer `{"error":{code,message}}` without the envelope.
  const bare = (value as { error?: unknown } | null)?.error as { code?: unknown; message?: unknown } | undefined;
  if (bare !== null && typeof bare === 'object' && Number.isInteger(bare.code) && typeof bare.message === 'string') {
    return new JsonRpcError(bare as { code: number; message: string }, null, res.status);
  }
  return notJsonRpc(`HTTP ${res.status} ${res.statusText}`.trim(), answer);
}
