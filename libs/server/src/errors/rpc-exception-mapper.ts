import { HttpException, HttpStatus, Injectable, Logger } from '@nestjs/common';
import { isErrorObject, RpcErrorCode, RpcErrorMessage, type RpcErrorObject } from '@nest-jsonrpc/protocol';
import { RpcException } from './rpc-exceptions.js';

/** Nest's default messages, which say nothing a JSON-RPC client can use; replaced by ours. */
const GENERIC_HTTP_MESSAGES = new Set([
  'Forbidden resource',
  'Forbidden',
  'Unauthorized',
  'Not Found',
  'Bad Request',
  'Too Many Requests',
  'ThrottlerException: Too Many Requests',
]);

/** What a thrown value maps to: the error object the client is sent and, for a failure nobody chose, the cause to log. */
export interface RpcErrorMapping {
  readonly error: RpcErrorObject;
  /**
   * Set when `error` is a -32603 the mapper made (anything but an `RpcException`): what was thrown
   * (or what was wrong with the mapping), to be logged with its stack and never sent.
   */
  readonly unhandled?: { readonly cause: unknown };
}

/**
 * Turns anything thrown during a call into the error object sent to the client (README.md, "Errors").
 * RpcExceptions pass through; Nest HttpExceptions map by status; anything else is -32603 with the
 * fixed message, its cause logged with its stack and never sent.
 *
 * Stateless: `mapError` is a pure function of what was thrown (it may run more than once for one
 * failure — the observer learns the code first, the transport answers with it), and
 * `toErrorObject` is `mapError` plus logging the cause, called once by the code that answers the
 * call. One instance serves every transport. To change the mapping, subclass it, override the
 * protected hooks (keep them free of side effects; to change how a cause is logged, override
 * `logUnhandled`), and name the subclass in the module options: `JsonRpcModule.forRoot({
 * exceptionMapper: MyMapper })` (it is created with dependency injection, so it may inject global
 * providers). Whatever a subclass returns, the code that reaches the wire is an integer: anything
 * else becomes -32603 (logged).
 */
@Injectable()
export class RpcExceptionMapper {
  protected readonly logger = new Logger('JsonRpc');

  /** The error object to answer with; a -32603's cause is logged here (the caller answers the call). */
  toErrorObject(error: unknown, method?: string): RpcErrorObject {
    const mapping = this.mapError(error, method);
    if (mapping.unhandled !== undefined) this.logUnhandled(mapping.unhandled.cause, method);
    return mapping.error;
  }

  /** The error object and the cause to log, logging nothing: for code that reports a failure it does not answer. */
  mapError(error: unknown, method?: string): RpcErrorMapping {
    const mapped = this.map(error, method);
    if (!isErrorObject(mapped)) {
      const cause = new TypeError(`the exception mapper produced an invalid error object (code ${String((mapped as { code?: unknown } | null)?.code)})`);
      return { error: this.internal(cause, method), unhandled: { cause } };
    }
    if (mapped.code !== RpcErrorCode.InternalError || error instanceof RpcException) return { error: mapped };
    return { error: mapped, unhandled: { cause: error } };
  }

  /** The mapping itself; subclasses usually override one of the hooks below instead. */
  protected map(error: unknown, method?: string): RpcErrorObject {
    if (error instanceof RpcException) return error.toErrorObject();
    if (error instanceof HttpException) return this.fromHttpException(error, method);
    return this.internal(error, method);
  }

  protected fromHttpException(error: HttpException, method?: string): RpcErrorObject {
    const status = error.getStatus();
    const message = this.ownMessage(error);
    switch (status) {
      case HttpStatus.UNAUTHORIZED:
      case HttpStatus.FORBIDDEN:
        return { code: RpcErrorCode.AccessDenied, message: message ?? RpcErrorMessage[RpcErrorCode.AccessDenied] };
      case HttpStatus.NOT_FOUND:
        return { code: RpcErrorCode.NotFound, message: message ?? RpcErrorMessage[RpcErrorCode.NotFound] };
      case HttpStatus.TOO_MANY_REQUESTS:
        return {
          code: RpcErrorCode.RateLimitExceeded,
          message: message ?? (method ? `Rate limit exceeded for ${method}` : RpcErrorMessage[RpcErrorCode.RateLimitExceeded]),
        };
      case HttpStatus.BAD_REQUEST:
        return this.fromBadRequest(error);
      default:
        return this.internal(error, method);
    }
  }

  /** A BadRequestException (often from ValidationPipe) is a params problem: its messages become data. */
  protected fromBadRequest(error: HttpException): RpcErrorObject {
    const response = error.getResponse();
    const messages =
      typeof response === 'object' && response !== null ? (response as { message?: unknown }).message : undefined;
    const list = Array.isArray(messages) ? messages : typeof messages === 'string' ? [messages] : [];
    const data = list
      .filter((m) => !GENERIC_HTTP_MESSAGES.has(String(m)))
      .map((m) => ({ path: null, message: String(m), code: null }));
    return data.length
      ? { code: RpcErrorCode.InvalidParams, message: RpcErrorMessage[RpcErrorCode.InvalidParams], data }
      : { code: RpcErrorCode.InvalidParams, message: RpcErrorMessage[RpcErrorCode.InvalidParams] };
  }

  /** -32603 with the fixed message; `mapError` reports the cause to log (never sent). */
  protected internal(_error: unknown, _method?: string): RpcErrorObject {
    return { code: RpcErrorCode.InternalError, message: RpcErrorMessage[RpcErrorCode.InternalError] };
  }

  /** Logs a -32603's cause, with its stack and the method it happened in. */
  protected logUnhandled(error: unknown, method: string | undefined): void {
    const where = method ? ` in ${method}` : '';
    if (error instanceof Error) this.logger.error(`Unhandled error${where}: ${error.message}`, error.stack);
    else this.logger.error(`Unhandled non-error value thrown${where}: ${safeString(error)}`);
  }

  private ownMessage(error: HttpException): string | undefined {
    return GENERIC_HTTP_MESSAGES.has(error.message) ? undefined : error.message;
  }
}

function safeString(value: unknown): string {
  try {
    return typeof value === 'string' ? value : JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
