/** One problem with the params, as sent in `error.data` of a -32602 (DESIGN §4). */
export interface ParamViolation {
  /** Dotted path into params (`address.city`, `items.0.qty`); null when it concerns no one key. */
  path: string | null;
  message: string;
  /** The class-validator constraint name (`isEmail`), or null for unknown keys. */
  code: string | null;
}
