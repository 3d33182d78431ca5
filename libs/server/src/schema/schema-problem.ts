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
