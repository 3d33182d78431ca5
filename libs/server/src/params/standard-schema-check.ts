import type { StandardSchemaV1 } from '../decorators/standard-schema.js';
import type { ParamViolation } from './param-violation.js';
import { declaresZodAsyncWork, zodAsyncValidation } from './zod-async-validation.js';

type Result = StandardSchemaV1.Result<unknown>;

/** The `code` of an issue whose library names none (a plain Standard Schema issue has no code). */
export const SCHEMA_ISSUE_FALLBACK_CODE = 'invalid';

/** Longest issue message sent: a library may quote the rejected value, which the caller chose the size of. */
const MAX_MESSAGE_LENGTH = 500;

/**
 * What a schema that recursed past the stack answers (a recursive schema fed hostile nesting): the
 * caller's input, not a fault, reported as a DTO's is (`DtoBinder`).
 */
const TOO_DEEP: Result = Object.freeze({
  issues: Object.freeze([Object.freeze({ message: 'Params are nested too deeply', path: Object.freeze([]), code: 'maxDepth' })]),
});

/**
 * One Standard Schema, ready to validate values: `~standard` is read once here (a Valibot
 * schema builds it afresh on every read). Built at startup; `check` is the per-call path and
 * adds nothing to the library's own work. A schema whose refinement throws is not the caller's
 * fault: the error propagates (answered -32603 and logged), apart from a stack overflow.
 */
export class StandardSchemaCheck {
  private readonly props: StandardSchemaV1.Props;
  /** zod's own async validation, for a zod schema (see zod-async-validation.ts). */
  private readonly zodAsync: ((value: unknown) => Promise<Result>) | undefined;
  /** The schema validates asynchronously: known at startup, or learnt from its first asynchronous answer. */
  private async: boolean;

  constructor(readonly schema: StandardSchemaV1) {
    this.props = schema['~standard'];
    this.zodAsync = zodAsyncValidation(schema, this.props.vendor);
    this.async = this.zodAsync !== undefined && declaresZodAsyncWork(schema);
  }

  get vendor(): string {
    return this.props.vendor;
  }

  /** The library's result, synchronous when the schema is (zod, Valibot and ArkType are, without async refinements). */
  check(value: unknown): Result | Promise<Result> {
    let result: Result | Promise<Result>;
    try {
      result = this.async && this.zodAsync !== undefined ? this.zodAsync(value) : this.props.validate(value);
    } catch (error) {
      if (isStackOverflow(error)) return TOO_DEEP;
      throw error;
    }
    if (result !== null && typeof (result as Promise<Result>).then === 'function') {
      return Promise.resolve(result).then(
        (settled) => {
          // Learnt from an answer, not from a failure: zod also turns to its async walk when the
          // synchronous one overflowed the stack, which says nothing about the schema.
          this.async = true;
          return settled;
        },
        (error: unknown) => {
          if (isStackOverflow(error)) return TOO_DEEP;
          throw error;
        },
      );
    }
    return result;
  }
}

export function isPendingResult(result: Result | Promise<Result>): result is Promise<Result> {
  return typeof (result as Promise<Result>).then === 'function';
}

/**
 * Appends one violation per issue, in the DTO violations' shape: `path` the issue's path joined
 * with dots under `prefix` (array indices as numbers: `lines.0.qty`; the root is `prefix`, `""`
 * at the top), `code` the library's own (zod's and ArkType's `code`, Valibot's `type`) or
 * `SCHEMA_ISSUE_FALLBACK_CODE`. An issue that lists the `keys` it concerns (zod's
 * `unrecognized_keys`, raised on the object) is one violation per key, at the key's own path, as
 * ArkType, Valibot and DTOs report unknown keys.
 */
export function appendSchemaIssues(issues: ReadonlyArray<StandardSchemaV1.Issue>, prefix: string, out: ParamViolation[]): void {
  for (const issue of issues) {
    let path = prefix;
    const segments = issue.path;
    if (segments) {
      for (const segment of segments) path = joinPath(path, segment !== null && typeof segment === 'object' ? (segment as StandardSchemaV1.PathSegment).key : segment);
    }
    const message = messageOf(issue);
    const code = codeOf(issue);
    const keys = (issue as { keys?: unknown }).keys;
    if (Array.isArray(keys) && keys.length > 0 && keys.every((k) => typeof k === 'string')) {
      for (const key of keys as string[]) out.push({ path: joinPath(path, key), message, code });
    } else out.push({ path, message, code });
  }
}

function joinPath(path: string, key: PropertyKey): string {
  return path === '' ? String(key) : `${path}.${String(key)}`;
}

function messageOf(issue: StandardSchemaV1.Issue): string {
  const message = typeof issue.message === 'string' ? issue.message : 'Invalid value';
  if (message.length <= MAX_MESSAGE_LENGTH) return message;
  // Never cut a surrogate pair in two.
  const end = /[\uD800-\uDBFF]/.test(message[MAX_MESSAGE_LENGTH - 1]) ? MAX_MESSAGE_LENGTH - 1 : MAX_MESSAGE_LENGTH;
  return `${message.slice(0, end)}…`;
}

function codeOf(issue: StandardSchemaV1.Issue): string {
  const { code, type } = issue as { code?: unknown; type?: unknown };
  if (typeof code === 'string' && code !== '') return code;
  if (typeof type === 'string' && type !== '') return type;
  return SCHEMA_ISSUE_FALLBACK_CODE;
}

function isStackOverflow(error: unknown): boolean {
  return error instanceof RangeError && /call stack/i.test(error.message);
}
