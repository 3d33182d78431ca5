import { RpcErrorCode } from './error-codes.js';

/** A JSON-RPC id as the spec allows it: string, number or null. */
export type RpcId = string | number | null;

export type RpcParamsValue = Record<string, unknown> | unknown[];

export interface RpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/** A request object that passed §4 validation. `id` is absent for notifications. */
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
  /** What exactly is wrong, for logs. */
  reason: string;
}

const hasOwn = Object.prototype.hasOwnProperty;

export function isValidId(id: unknown): id is RpcId {
  return id === null || typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id));
}

/**
 * The answer is the spec's own (`Invalid Request`, nothing appended) so that clients matching the
 * spec's examples byte for byte keep working; `reason` is kept for logs and debugging only.
 */
function invalid(reason: string, id: RpcId): RpcInvalidEnvelope {
  return { invalid: { code: RpcErrorCode.InvalidRequest, message: 'Invalid Request' }, id, reason };
}

/**
 * Validates one request object (spec §4). Never throws: an invalid one comes back with its error
 * and the id to echo — the request's own id when that id is itself valid, null otherwise.
 */
export function parseRequestEnvelope(value: unknown): RpcRequestEnvelope | RpcInvalidEnvelope {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return invalid('a request must be an object', null);
  }
  const obj = value as Record<string, unknown>;
  const hasId = hasOwn.call(obj, 'id');
  const id = obj.id;
  const idOk = !hasId || isValidId(id);
  const echoId: RpcId = hasId && idOk ? (id as RpcId) : null;
  if (obj.jsonrpc !== '2.0') return invalid('"jsonrpc" must be exactly "2.0"', echoId);
  if (typeof obj.method !== 'string') return invalid('"method" must be a string', echoId);
  if (!idOk) return invalid('"id" must be a string, a number or null', null);
  const params = obj.params;
  if (params !== undefined && (params === null || typeof params !== 'object')) {
    return invalid('"params" must be an object or an array', echoId);
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
