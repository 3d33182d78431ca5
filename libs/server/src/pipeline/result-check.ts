import { Logger } from '@nestjs/common';
import type { StandardSchemaV1 } from '../decorators/standard-schema.js';
import type { ParamViolation } from '../params/param-violation.js';
import { appendSchemaIssues, isPendingResult, type StandardSchemaCheck } from '../params/standard-schema-check.js';
import { assertRowSource, isPromiseLike, rowIteratorOf, RowSource, stopRowIterator, type RowIterator } from './stream-source.js';

/**
 * A result or row that does not match the method's Standard Schema under `validateResults`: the
 * handler's mistake, not the caller's. It is not an `RpcException`, so the exception mapper
 * answers -32603 and logs this message (with every issue), never sending it.
 */
export class RpcResultValidationError extends Error {
  constructor(method: string, what: 'result' | 'row', issues: ReadonlyArray<StandardSchemaV1.Issue>) {
    const violations: ParamViolation[] = [];
    appendSchemaIssues(issues, '', violations);
    const listed = violations.map((v) => `${v.path === '' ? '(root)' : v.path}: ${v.message}`).join('; ');
    super(`the ${what} of "${method}" does not match its schema: ${listed}`);
    this.name = 'RpcResultValidationError';
  }
}

/** `value` checked against `check`: the schema's output, or a throw; a Promise when the value or the schema is async. */
export function checkedResult(check: StandardSchemaCheck, method: string, value: unknown): unknown {
  if (isPromiseLike(value)) return value.then((settled) => checkedResult(check, method, settled));
  const result = check.check(value);
  if (isPendingResult(result)) return result.then((settled) => outputOf(settled, method, 'result'));
  return outputOf(result, method, 'result');
}

function outputOf(result: StandardSchemaV1.Result<unknown>, method: string, what: 'result' | 'row'): unknown {
  if (result.issues) throw new RpcResultValidationError(method, what, result.issues);
  return result.value;
}

/**
 * A stream's rows, each checked against the method's row schema as it is pulled: a row that fails
 * stops the producer and fails the stream (its error row says -32603, the log says why). A
 * synchronous source with a synchronous schema stays synchronous.
 */
export class CheckedRows extends RowSource {
  private static readonly logger = new Logger('JsonRpc');

  constructor(
    private readonly source: unknown,
    private readonly check: StandardSchemaCheck,
    private readonly method: string,
  ) {
    super();
    // A handler value that is no stream fails here, as it would where the rows are pulled.
    assertRowSource(source);
  }

  rowIterator(): RowIterator {
    const inner = rowIteratorOf(this.source);
    const checkRow = (next: IteratorResult<unknown>): IteratorResult<unknown> | Promise<IteratorResult<unknown>> => {
      if (next.done) return next;
      const result = this.check.check(next.value);
      if (isPendingResult(result)) return result.then((settled) => this.rowOf(settled, inner));
      return this.rowOf(result, inner);
    };
    return {
      next: () => {
        const next = inner.next();
        return isPromiseLike(next) ? next.then(checkRow) : checkRow(next);
      },
      return: () => inner.return?.(),
    };
  }

  private rowOf(result: StandardSchemaV1.Result<unknown>, inner: RowIterator): IteratorResult<unknown> {
    if (result.issues) {
      stopRowIterator(inner, (error) => CheckedRows.logger.error(`A stream of "${this.method}" failed to stop after a row failed its schema`, error instanceof Error ? error.stack : String(error)));
      throw new RpcResultValidationError(this.method, 'row', result.issues);
    }
    return { value: result.value, done: false };
  }
}
