import { IntrinsicException } from '@nestjs/common';
import { isRpcErrorCode, RpcErrorCode, type RpcErrorObject } from '@nest-jsonrpc/protocol';

export interface RpcExceptionOptions {
  /** An integer (JSON-RPC requires one); anything else fails at construction with a TypeError. */
  code?: number;
  data?: unknown;
  cause?: unknown;
}

/**
 * The base of every error a handler, guard or pipe may throw to answer with a specific JSON-RPC
 * error. Code, message and data pass through to the client unchanged.
 * Intrinsic: it is an answer, not a fault, so Nest's exception filters do not log it.
 */
export class RpcException extends IntrinsicException {
  readonly code: number;
  readonly data: unknown;

  constructor(message: string, options: RpcExceptionOptions = {}) {
    const code = options.code ?? RpcErrorCode.InternalError;
    // Loudly, here: a handler that does this answers -32603 and the mistake is logged with its
    // stack, instead of a NaN reaching the wire as invalid JSON.
    if (!isRpcErrorCode(code)) throw new TypeError(`RpcException code must be an integer, got ${String(code)}`);
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.data = options.data;
  }

  toErrorObject(): RpcErrorObject {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}

/** Options of the built-in subclasses: the code defaults to the class's own. */
export type RpcBuiltinExceptionOptions = RpcExceptionOptions;

function builtin(defaultCode: number, defaultMessage: string) {
  return class extends RpcException {
    constructor(message: string = defaultMessage, options: RpcBuiltinExceptionOptions = {}) {
      super(message, { ...options, code: options.code ?? defaultCode });
    }
  };
}

export class RpcParseErrorException extends builtin(RpcErrorCode.ParseError, 'Parse error') {}
export class RpcInvalidRequestException extends builtin(RpcErrorCode.InvalidRequest, 'Invalid Request') {}
export class RpcMethodNotFoundException extends builtin(RpcErrorCode.MethodNotFound, 'Method not found') {}
export class RpcInvalidParamsException extends builtin(RpcErrorCode.InvalidParams, 'Invalid params') {}
export class RpcInternalErrorException extends builtin(RpcErrorCode.InternalError, 'Internal error') {}
export class RpcAccessDeniedException extends builtin(RpcErrorCode.AccessDenied, 'Access denied') {}
export class RpcNotFoundException extends builtin(RpcErrorCode.NotFound, 'Not found') {}
export class RpcRateLimitExceededException extends builtin(RpcErrorCode.RateLimitExceeded, 'Rate limit exceeded') {}

/**
 * A body over `maxRequestSize`: -32600 on the wire, always with HTTP 413. The routes answer an
 * oversize body with `RpcRequestTooLargeException.forLimit(maxRequestSize)`.
 */
export class RpcRequestTooLargeException extends builtin(RpcErrorCode.InvalidRequest, 'Invalid Request: request too large') {
  static forLimit(maxRequestSize: number): RpcRequestTooLargeException {
    return new RpcRequestTooLargeException(`Invalid Request: body exceeds ${maxRequestSize} bytes`);
  }
}
