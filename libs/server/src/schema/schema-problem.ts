/**
 * Something a class or schema says that JSON Schema cannot express. The schema is left permissive
 * there (it never rejects what the server accepts); the module logs each problem once at startup.
 */
export interface SchemaProblem {
  /** `ClassName.property`, `ClassName`, or `<method> params|result|row`. */
  readonly where: string;
  readonly message: string;
}

export type SchemaProblemSink = (problem: SchemaProblem) => void;

/** A Standard Schema that gives no JSON Schema (no converter, or the converter refused): a startup failure. */
export interface SchemaFailure {
  readonly method: string;
  /** `params`, `param "<name>"`, `result` or `row`. */
  readonly what: string;
  readonly message: string;
}
