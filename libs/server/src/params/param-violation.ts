/** One problem with the params, as sent in `error.data` of a -32602 (README.md, "Errors"). */
export interface ParamViolation {
  /**
   * Dotted path into params (`address.city`, `items.0.qty`); `""` for an issue a Standard Schema
   * raises about the params as a whole; null when it concerns no one key.
   */
  path: string | null;
  message: string;
  /**
   * The class-validator constraint name (`isEmail`), the Standard Schema library's issue code
   * (zod's `too_small`, Valibot's `min_value`, ArkType's `min`; `invalid` when it has none), or
   * null for unknown keys.
   */
  code: string | null;
}
