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

/**
 * Turns anything thrown during a call into the error object sent to the client (DESIGN §4).
 * RpcExceptions pass through; Nest HttpExceptions map by status; anything else is -32603 with the
 * fixed message, logged with its stack and never sent.
 *
 * One instance serves every transport. To change the mapping, subclass it, override the protected
 * hooks, and name the subclass in the module options: `JsonRpcModule.forRoot({ exceptionMapper:
 * MyMapper })` (it is created with dependency injection, so it may inject global providers).
 * Whatever a subclass returns, the code that reaches the wire is an integer: anything else becomes
 * -32603 (logged).
 */
@Injectable()
export class RpcExceptionMapper {
  protected readonly logger = new Logger('JsonRpc');
  /**
   * What each thrown object was mapped to (for which method): the observer (spans, events) maps a
   * call's error first, without logging; the transport's mapping then reuses it and logs a -32603
   * cause exactly as before, once.
   */
  private readonly mapped = new WeakMap<object, { method: string | undefined; error: RpcErrorObject; unloggedCause?: { error: unknown } }>();
  private quiet = false;
  /** The -32603 cause a quiet mapping did not log (logged when the transport maps the same value). */
  private unloggedCause: { error: unknown } | undefined;

  toErrorObject(error: unknown, method?: string): RpcErrorObject {
    const key = typeof error === 'object' && error !== null ? error : undefined;
    if (key !== undefined) {
      const seen = this.mapped.get(key);
      if (seen !== undefined && seen.method === method) {
        if (seen.unloggedCause !== undefined && !this.quiet) {
          this.logCause(seen.unloggedCause.error, method);
          seen.unloggedCause = undefined;
        }
        return seen.error;
      }
    }
    this.unloggedCause = undefined;
    const mapped = this.map(error, method);
    const result = isErrorObject(mapped)
      ? mapped
      : this.internal(new TypeError(`the exception mapper produced an invalid error object (code ${String((mapped as { code?: unknown } | null)?.code)})`), method);
    if (key !== undefined) this.mapped.set(key, { method, error: result, unloggedCause: this.unloggedCause });
    this.unloggedCause = undefined;
    return result;
  }

  /**
   * @internal `toErrorObject` without logging a -32603's cause: `observability/` learns a failed
   * call's code before the transport maps (and logs) it.
   */
  toErrorObjectUnlogged(error: unknown, method?: string): RpcErrorObject {
    this.quiet = true;
    try {
      return this.toErrorObject(error, method);
    } finally {
      this.quiet = false;
    }
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

  /** -32603 with the fixed message; the cause is logged (with its stack), never sent. */
  protected internal(error: unknown, method?: string): RpcErrorObject {
    if (this.quiet) this.unloggedCause = { error };
    else this.logCause(error, method);
    return { code: RpcErrorCode.InternalError, message: RpcErrorMessage[RpcErrorCode.InternalError] };
  }

  private logCause(error: unknown, method: string | undefined): void {
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
