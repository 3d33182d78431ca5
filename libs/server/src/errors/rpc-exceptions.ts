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

/**
 * The base of the built-in exceptions: each subclass names its code and default message as
 * statics, read through `new.target` (a named base rather than a class made by a function, so the
 * typings name every class a user can see: etc/server.api.md).
 */
export abstract class RpcBuiltinException extends RpcException {
  /** The code answered unless `options.code` gives another. */
  static readonly defaultCode: number = RpcErrorCode.InternalError;
  /** The message answered when the constructor is given none. */
  static readonly defaultMessage: string = 'Internal error';

  constructor(message?: string, options: RpcBuiltinExceptionOptions = {}) {
    const defaults = new.target as typeof RpcBuiltinException;
    super(message ?? defaults.defaultMessage, { ...options, code: options.code ?? defaults.defaultCode });
  }
}

export class RpcParseErrorException extends RpcBuiltinException {
  static override readonly defaultCode = RpcErrorCode.ParseError;
  static override readonly defaultMessage = 'Parse error';
}
export class RpcInvalidRequestException extends RpcBuiltinException {
  static override readonly defaultCode = RpcErrorCode.InvalidRequest;
  static override readonly defaultMessage = 'Invalid Request';
}
export class RpcMethodNotFoundException extends RpcBuiltinException {
  static override readonly defaultCode = RpcErrorCode.MethodNotFound;
  static override readonly defaultMessage = 'Method not found';
}
export class RpcInvalidParamsException extends RpcBuiltinException {
  static override readonly defaultCode = RpcErrorCode.InvalidParams;
  static override readonly defaultMessage = 'Invalid params';
}
export class RpcInternalErrorException extends RpcBuiltinException {
  static override readonly defaultCode = RpcErrorCode.InternalError;
  static override readonly defaultMessage = 'Internal error';
}
export class RpcAccessDeniedException extends RpcBuiltinException {
  static override readonly defaultCode = RpcErrorCode.AccessDenied;
  static override readonly defaultMessage = 'Access denied';
}
export class RpcNotFoundException extends RpcBuiltinException {
  static override readonly defaultCode = RpcErrorCode.NotFound;
  static override readonly defaultMessage = 'Not found';
}
export class RpcRateLimitExceededException extends RpcBuiltinException {
  static override readonly defaultCode = RpcErrorCode.RateLimitExceeded;
  static override readonly defaultMessage = 'Rate limit exceeded';
}

/**
 * A body over `maxRequestSize`: -32600 on the wire, always with HTTP 413. The routes answer an
 * oversize body with `RpcRequestTooLargeException.forLimit(maxRequestSize)`.
 */
export class RpcRequestTooLargeException extends RpcBuiltinException {
  static override readonly defaultCode = RpcErrorCode.InvalidRequest;
  static override readonly defaultMessage = 'Invalid Request: request too large';

  static forLimit(maxRequestSize: number): RpcRequestTooLargeException {
    return new RpcRequestTooLargeException(`Invalid Request: body exceeds ${maxRequestSize} bytes`);
  }
}
