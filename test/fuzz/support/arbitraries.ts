/**
 * fast-check arbitraries of hostile JSON-RPC input, as raw text: JSON-RPC itself is defined on
 * JSON text, and some of what matters here (duplicate keys, numbers beyond a double, `__proto__`
 * keys, lone surrogates) is lost by building values and calling JSON.stringify.
 */
import fc from 'fast-check';
import { FUZZED_METHODS } from './fuzz-app.js';

/** Numbers as written on the wire, including ones a double cannot hold. */
export const rawNumber: fc.Arbitrary<string> = fc.oneof(
  fc.integer().map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => JSON.stringify(n)),
  fc.constantFrom('1e400', '-1e400', '1e-400', '123456789012345678901234567890', '-0', '9007199254740993', '0.1e1', '1E+2', '-9.99e307'),
);

/** Strings with the characters that break encoders: lone surrogates, U+2028/9, NUL, `</script>`. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.string({ unit: 'grapheme', maxLength: 6 }),
  fc.constantFrom('\u2028', '\u2029', '\ud800', '\udfff', '\udc00\ud800', '</script>', '<!--', '\u0000', '\ufeff', ''),
);

/** A JSON string literal; `\u` escapes of lone surrogates included (JSON.stringify writes them so). */
export const stringLiteral: fc.Arbitrary<string> = fc.oneof(
  hostileString.map((s) => JSON.stringify(s)),
  fc.constantFrom('"\\ud800"', '"\\udfff\\ud800"', '"\\u2028"', '"\\u0000"', '"a\\/b"'),
);

export const hostileKey: fc.Arbitrary<string> = fc.oneof(
  hostileString,
  fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'jsonrpc', 'method', 'params', 'id', 'a', 'b'),
);

/** Any JSON text (depth bounded by fast-check's size), keys may repeat. */
export const jsonText: fc.Arbitrary<string> = fc.letrec<{ value: string; leaf: string; array: string; object: string }>((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, tie('leaf'), tie('array'), tie('object')),
  leaf: fc.oneof(rawNumber, stringLiteral, fc.constantFrom('true', 'false', 'null')),
  array: fc.array(tie('value'), { maxLength: 4 }).map((items) => `[${items.join(',')}]`),
  object: fc
    .array(fc.tuple(hostileKey, tie('value')), { maxLength: 4 })
    .map((entries) => `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`),
})).value;

/** Arrays or objects nested `depth` deep (up to 20,000: far past any recursion a parser or validator should do). */
export const deepNesting: fc.Arbitrary<string> = fc
  .tuple(fc.integer({ min: 1, max: 20_000 }), fc.boolean())
  .map(([depth, arrays]) => (arrays ? `${'['.repeat(depth)}1${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`));

const paramsText: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: jsonText.filter((t) => t.startsWith('{') || t.startsWith('[')) },
  { weight: 2, arbitrary: fc.tuple(rawNumber, rawNumber).map(([a, b]) => `{"a":${a},"b":${b}}`) },
  { weight: 1, arbitrary: jsonText },
  { weight: 1, arbitrary: deepNesting },
  { weight: 1, arbitrary: fc.tuple(fc.integer({ min: -1, max: 5 }), fc.boolean()).map(([rows, fail]) => `{"rows":${rows},"fail":${fail}}`) },
);

const idText: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.integer().map(String) },
  { weight: 3, arbitrary: stringLiteral },
  { weight: 1, arbitrary: fc.constantFrom('null', '1.5', '1e400', '-0', 'true', '{}', '[]', '[1]', '{"__proto__":1}') },
);

export const methodText: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...FUZZED_METHODS).map((m) => JSON.stringify(m)) },
  { weight: 1, arbitrary: fc.constantFrom('"rpc.discover"', '"rpc.x"', '""', '"__proto__"', '"constructor"', '"toString"', '"echo "', '"ECHO"', '1', 'null', '["echo"]') },
  { weight: 1, arbitrary: stringLiteral },
);

/** One member of an envelope, usually right, sometimes any JSON. */
const member = (name: string, usual: fc.Arbitrary<string>) => fc.oneof({ weight: 8, arbitrary: usual }, { weight: 1, arbitrary: jsonText }).map((v) => [name, v] as const);

/** A request object: the four members each present or not, sometimes wrong, sometimes twice; extra keys. */
export const envelopeText: fc.Arbitrary<string> = fc
  .record(
    {
      jsonrpc: member('jsonrpc', fc.oneof({ weight: 9, arbitrary: fc.constant('"2.0"') }, { weight: 1, arbitrary: fc.constantFrom('"1.0"', '2', '2.0', '"2.0 "', 'null') })),
      method: member('method', methodText),
      params: member('params', paramsText),
      id: member('id', idText),
      extra: fc.array(fc.tuple(hostileKey, jsonText), { maxLength: 2 }),
      repeat: fc.option(fc.constantFrom('jsonrpc', 'method', 'params', 'id')),
    },
    { requiredKeys: ['extra', 'repeat'] },
  )
  .chain((r) => {
    const members: Array<readonly [string, string]> = [];
    for (const key of ['jsonrpc', 'method', 'params', 'id'] as const) if (r[key]) members.push(r[key]!);
    members.push(...r.extra);
    const repeated = r.repeat ? members.find(([k]) => k === r.repeat) : undefined;
    if (repeated) members.push([repeated[0], 'null']);
    return fc.shuffledSubarray(members, { minLength: members.length, maxLength: members.length });
  })
  .map((members) => `{${members.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`);

/** A text damaged 1-3 times: cut, spliced, a character inserted or replaced, a slice doubled. */
export const mutated = (text: fc.Arbitrary<string>): fc.Arbitrary<string> =>
  fc
    .tuple(
      text,
      fc.array(fc.tuple(fc.constantFrom('cut', 'insert', 'replace', 'double', 'delete'), fc.nat(), fc.nat({ max: 8 }), hostileString), {
        minLength: 1,
        maxLength: 3,
      }),
    )
    .map(([t, edits]) => {
      let s = t;
      for (const [edit, at, len, insert] of edits) {
        const i = s.length === 0 ? 0 : at % s.length;
        if (edit === 'cut') s = s.slice(0, i);
        else if (edit === 'insert') s = s.slice(0, i) + insert + s.slice(i);
        else if (edit === 'replace') s = s.slice(0, i) + (insert || '"') + s.slice(i + 1);
        else if (edit === 'double') s = s.slice(0, i + len) + s.slice(i, i + len) + s.slice(i + len);
        else s = s.slice(0, i) + s.slice(i + len);
      }
      return s;
    });

/** A batch of request texts (possibly empty, possibly containing non-objects). */
export const batchText: fc.Arbitrary<string> = fc
  .array(fc.oneof({ weight: 5, arbitrary: envelopeText }, { weight: 1, arbitrary: jsonText }), { maxLength: 8 })
  .map((items) => `[${items.join(',')}]`);

/** A body for `/rpc`: text, or raw bytes that need not be UTF-8. */
export type Body = string | Uint8Array;
export const rpcBody: fc.Arbitrary<Body> = fc.oneof(
  { weight: 5, arbitrary: envelopeText },
  { weight: 3, arbitrary: batchText },
  { weight: 3, arbitrary: mutated(fc.oneof(envelopeText, batchText)) },
  { weight: 1, arbitrary: jsonText },
  { weight: 1, arbitrary: hostileString },
  { weight: 1, arbitrary: deepNesting },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }) },
);

/** Mostly JSON content types, sometimes not (415 is the documented answer). */
export const contentType: fc.Arbitrary<string> = fc.oneof(
  { weight: 12, arbitrary: fc.constant('application/json') },
  { weight: 1, arbitrary: fc.constantFrom('application/json; charset=utf-8', 'application/json-rpc', 'text/plain', 'application/x-www-form-urlencoded', 'APPLICATION/JSON', 'application/json; charset=latin1') },
);
