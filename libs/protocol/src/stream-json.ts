/**
 * Row serialisation for every stream format. Pure: no Nest, no Fastify.
 *
 * `JSON.stringify` already escapes `\n` and `\r`, so a row can never break an NDJSON line or an
 * SSE field. On top of that `<`, U+2028 and U+2029 are written as `\u` escapes: the JSON means
 * exactly the same, but a row that carries `</script>` or `<!--` stays inert if a page ever
 * inlines it, and the text stays valid inside a JavaScript string literal.
 */
const NEEDS_ESCAPE = /[<\u2028\u2029]/;
const NEEDS_ESCAPE_ALL = /[<\u2028\u2029]/g;

function escapeChar(char: string): string {
  return char === '<' ? '\\u003c' : char === '\u2028' ? '\\u2028' : '\\u2029';
}

/**
 * One row as JSON text on a single line. `undefined` (a bare `yield`) becomes `null`. Throws for
 * what JSON cannot represent (BigInt, cycles); the stream writer turns that into an error frame.
 */
export function serializeStreamRow(value: unknown): string {
  const json = JSON.stringify(value);
  return json === undefined ? 'null' : escapeStreamJson(json);
}

/** The same escaping for JSON text built elsewhere (error frames). */
export function escapeStreamJson(json: string): string {
  return NEEDS_ESCAPE.test(json) ? json.replace(NEEDS_ESCAPE_ALL, escapeChar) : json;
}
