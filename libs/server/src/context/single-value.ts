/**
 * A header or query value given once as a string; undefined when absent, repeated (an array) or
 * not a string. For readers to whom a repeated value means nothing; one that must say "given
 * twice" reads the array itself (`durable/durable-http-routes.ts`).
 */
export function singleValue(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
