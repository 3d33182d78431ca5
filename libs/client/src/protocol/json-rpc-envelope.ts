import {
  JsonRpcError,
  JsonRpcProtocolError,
} from '../errors/client-errors.js';
import { parseResponseObject, type RpcResponseObject } from '@nest-jsonrpc/protocol';

export type JsonRpcParams = Record<string, unknown> | readonly unknown[];

/** One request object (spec §4); `id` absent makes it a notification. */
export interface JsonRpcRequestObject {
  jsonrpc: '2.0';
  method: string;
  params?: JsonRpcParams;
  id?: number;
}

export function requestObject(method: string, params: JsonRpcParams | undefined, id: number | undefined): JsonRpcRequestObject {
  if (typeof method !== 'string' || method === '') throw new TypeError('method must be a non-empty string');
  if (params !== undefined && (params === null || typeof params !== 'object')) {
    throw new TypeError('params must be an object or an array (JSON-RPC 2.0 §4.2)');
  }
  const request: JsonRpcRequestObject = { jsonrpc: '2.0', method };
  if (params !== undefined) request.params = params;
  if (id !== undefined) request.id = id;
  return request;
}

/** What the HTTP exchange gave back, for interpreting and for error messages. */
export interface AnswerContext {
  url: string;
  status: number;
  contentType: string | null;
  text: string;
}

export type ResponseObject = RpcResponseObject;

export function notJsonRpc(why: string, answer: AnswerContext, cause?: unknown): JsonRpcProtocolError {
  const status = answer.status >= 200 && answer.status < 300 ? '' : ` (HTTP ${answer.status})`;
  return new JsonRpcProtocolError(`not a JSON-RPC answer${status}: ${why}`, {
    url: answer.url,
    status: answer.status,
    contentType: answer.contentType,
    snippet: answer.text,
    cause,
  });
}

export function parseAnswer(answer: AnswerContext): unknown {
  try {
    return JSON.parse(answer.text);
  } catch (cause) {
    const type = answer.contentType ?? 'no Content-Type';
    throw notJsonRpc(answer.text === '' ? 'the body is empty' : `the body (${type}) is not JSON`, answer, cause);
  }
}

/** Checks one response object (spec §5), by the shared protocol guard; undefined when it is not one. */
export const responseObjectOf = parseResponseObject;

/** The error of a single error envelope (any HTTP status), for answers that are not our call's. */
export function errorEnvelopeOf(value: unknown): JsonRpcError | undefined {
  const response = responseObjectOf(value);
  return response !== undefined && !response.ok ? new JsonRpcError(response.error, response.id) : undefined;
}

/** The result of the answer to call `id`, or the JsonRpcError it carries. */
export function settleCall(value: unknown, id: number, answer: AnswerContext): unknown {
  const response = responseObjectOf(value);
  if (response === undefined) throw notJsonRpc('expected a JSON-RPC response object', answer);
  if (!response.ok) {
    // The server answers id null when it could not read the request's id (parse error, too large).
    if (response.id !== id && response.id !== null) throw notJsonRpc(`the answer's id ${JSON.stringify(response.id)} is not the call's id ${id}`, answer);
    throw new JsonRpcError(response.error, response.id, answer.status);
  }
  if (response.id !== id) throw notJsonRpc(`the answer's id ${JSON.stringify(response.id)} is not the call's id ${id}`, answer);
  return response.result;
}
