import { isRpcErrorCode, RpcErrorCode } from './error-codes.js';

/** A JSON-RPC id as the spec allows it: string, number or null. */
export type RpcId = string | number | null;

export type RpcParamsValue = Record<string, unknown> | unknown[];

export interface RpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/** A request object that passed spec §4 validation. `id` is absent for notifications. */
export interface RpcRequestEnvelope {
  jsonrpc: '2.0';
  method: string;
  params?: RpcParamsValue;
  id?: RpcId;
  /** True when the request carries no `id` member (spec §4.1). */
  isNotification: boolean;
}

/** A request object that failed validation, with the id to answer with (spec §5: null if unknown). */
export interface RpcInvalidEnvelope {
  invalid: RpcErrorObject;
  id: RpcId;
}

const hasOwn = Object.prototype.hasOwnProperty;

export function isValidId(id: unknown): id is RpcId {
  return id === null || typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id));
}

const INVALID_REQUEST: RpcErrorObject = Object.freeze({ code: RpcErrorCode.InvalidRequest, message: 'Invalid Request' });

/**
 * The answer is the spec's own (`Invalid Request`, nothing appended) so that clients matching the
 * spec's examples byte for byte keep working.
 */
function invalid(id: RpcId): RpcInvalidEnvelope {
  return { invalid: INVALID_REQUEST, id };
}

/**
 * Validates one request object (spec §4). Never throws: an invalid one comes back with its error
 * and the id to echo — the request's own id when that id is itself valid, null otherwise.
 */
export function parseRequestEnvelope(value: unknown): RpcRequestEnvelope | RpcInvalidEnvelope {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return invalid(null);
  }
  const obj = value as Record<string, unknown>;
  const hasId = hasOwn.call(obj, 'id');
  const id = obj.id;
  const idOk = !hasId || isValidId(id);
  const echoId: RpcId = hasId && idOk ? (id as RpcId) : null;
  if (obj.jsonrpc !== '2.0' || typeof obj.method !== 'string') return invalid(echoId);
  if (!idOk) return invalid(null);
  const params = obj.params;
  if (params !== undefined && (params === null || typeof params !== 'object')) {
    return invalid(echoId);
  }
  return {
    jsonrpc: '2.0',
    method: obj.method,
    params: params as RpcParamsValue | undefined,
    id: hasId ? (id as RpcId) : undefined,
    isNotification: !hasId,
  };
}

export function isInvalidEnvelope(e: RpcRequestEnvelope | RpcInvalidEnvelope): e is RpcInvalidEnvelope {
  return (e as RpcInvalidEnvelope).invalid !== undefined;
}

/** Names starting with `rpc.` are reserved for the protocol's own extensions (spec §4). */
export function isReservedMethodName(name: string): boolean {
  return name.startsWith('rpc.');
}

/** A JSON-RPC error object (spec §5.1): an integer `code`, a string `message`, optional `data`. */
export function isErrorObject(value: unknown): value is RpcErrorObject {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const v = value as Record<string, unknown>;
  return isRpcErrorCode(v.code) && typeof v.message === 'string';
}

/** One response object (spec §5), checked: a result or an error, never both, and a valid id. */
export type RpcResponseObject =
  | { readonly id: RpcId; readonly ok: true; readonly result: unknown }
  | { readonly id: RpcId; readonly ok: false; readonly error: RpcErrorObject };

/** Checks one response object (spec §5); undefined when `value` is not one. */
export function parseResponseObject(value: unknown): RpcResponseObject | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const v = value as Record<string, unknown>;
  if (v.jsonrpc !== '2.0' || !hasOwn.call(v, 'id')) return undefined;
  const id = v.id;
  if (id !== null && typeof id !== 'string' && !(typeof id === 'number' && Number.isFinite(id))) return undefined;
  const hasResult = hasOwn.call(v, 'result');
  if (hasResult === hasOwn.call(v, 'error')) return undefined;
  if (hasResult) return { id, ok: true, result: v.result };
  return isErrorObject(v.error) ? { id, ok: false, error: v.error } : undefined;
}
