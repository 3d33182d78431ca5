import { JsonRpcProtocolError, JsonRpcResponseTooLargeError } from '../errors/client-errors.js';
import { enc, end, errorFrame, expectEveryCut, row, run } from './feed.spec-support.js';
import { JsonArrayFrameDecoder } from './json-array-decoder.js';
import type { StreamFrame } from './stream-frame.js';

const make = () => new JsonArrayFrameDecoder();
const rows = [
  { i: 0, delta: 'token' },
  { tricky: 'brackets ] } [ { and "quotes" and \\ backslashes \\" end', emoji: '😀 中文' },
  [1, [2, [3, { x: ']' }]]],
  'a string with ] and , and "',
  '\\',
  12.5e3,
  -7,
  true,
  false,
  null,
  {},
  [],
];

describe('JsonArrayFrameDecoder (progressive JSON array)', () => {
  it('decodes every element and the closing bracket at every cut', () => {
    expectEveryCut(make, enc(JSON.stringify(rows)), { frames: [...rows.map(row), end('end')] });
  });

  it('accepts whitespace and newlines anywhere between tokens, and a leading BOM', () => {
    const text = '\uFEFF \n[ \r\n' + rows.map((r) => JSON.stringify(r, null, 2)).join(' ,\n\t') + '\n ] \n';
    expectEveryCut(make, enc(text), { frames: [...rows.map(row), end('end')] });
  });

  it('yields each element as soon as its last byte arrives, not at `]`', () => {
    const decoder = make();
    const frames: StreamFrame[] = [];
    decoder.decode(enc('[{"a":1'), frames);
    expect(frames).toEqual([]);
    decoder.decode(enc('}'), frames);
    expect(frames).toEqual([row({ a: 1 })]);
    decoder.decode(enc(',"s"'), frames);
    expect(frames).toEqual([row({ a: 1 }), row('s')]);
    decoder.decode(enc(',[1]'), frames);
    expect(frames).toHaveLength(3);
    decoder.decode(enc(',12'), frames); // a number can still grow: not yet
    expect(frames).toHaveLength(3);
    decoder.decode(enc('3,'), frames);
    expect(frames).toEqual([row({ a: 1 }), row('s'), row([1]), row(123)]);
  });

  it('an empty array is an empty stream', () => {
    expectEveryCut(make, enc('[]'), { frames: [end('end')] });
    expectEveryCut(make, enc(' [ \n ] '), { frames: [end('end')] });
  });

  it('the last element {"_error":{...}} is an error frame after the rows before it', () => {
    const text = '[{"i":1},{"i":2},{"_error":{"code":-32001,"message":"Access denied","data":{"role":"admin"}}}]';
    expectEveryCut(make, enc(text), { frames: [row({ i: 1 }), row({ i: 2 }), errorFrame(-32001, 'Access denied', { role: 'admin' })] });
  });

  it('a plain JSON-RPC error envelope instead of an array is that error', () => {
    expectEveryCut(make, enc('{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":1}'), {
      frames: [errorFrame(-32601, 'Method not found')],
    });
    expectEveryCut(make, enc('{"hello":"world"}'), { frames: [], error: /expected a JSON array, got an object that is not a JSON-RPC error/ });
  });

  it('a body cut off before `]` is truncated, and a number cut at the end is not delivered', () => {
    expectEveryCut(make, enc('[{"i":1},{"i":2'), {
      frames: [row({ i: 1 })],
      error: /^JsonRpcStreamTruncatedError: JSON array stream truncated after 1 row\(s\): the body ends inside element 1$/,
    });
    expectEveryCut(make, enc('[{"i":1},12'), { frames: [row({ i: 1 })], error: /ends inside element 1/ });
    expectEveryCut(make, enc('[{"i":1},'), { frames: [row({ i: 1 })], error: /ended without the closing `\]`/ });
    expectEveryCut(make, enc(''), { frames: [], error: /ended before `\[`/ });
  });

  it.each([
    ['<html>', /expected `\[` at byte 0, got "<html>"/],
    ['[1,,2]', /expected an element at byte 3/],
    ['[1,]', /expected an element after `,` at byte 3/],
    ['[1 2]', /expected `,` or `\]` at byte 3/],
    ['[{"a":1}}]', /expected `,` or `\]` at byte 8/],
    ['[1]x', /expected nothing after the closing `\]` at byte 3/],
    ['[{"a":}]', /element 0 is not JSON/],
    ['[tru]', /element 0 is not JSON/],
    ['\uFEFF\uFEFF[]', /the rest of a UTF-8 BOM|expected `\[`/],
  ])('garbage %j is a protocol error', (text, message) => {
    const outcome = run(make(), [enc(text)]);
    expect(outcome.error).toBeInstanceOf(JsonRpcProtocolError);
    expect(outcome.error!.message).toMatch(message);
  });

  it('delivers the rows before garbage in the same chunk', () => {
    const outcome = run(make(), [enc('[{"a":1},{"b":2} oops')]);
    expect(outcome.frames).toEqual([row({ a: 1 }), row({ b: 2 })]);
    expect(outcome.error).toBeInstanceOf(JsonRpcProtocolError);
  });

  it('invalid UTF-8 inside an element is a protocol error', () => {
    const bytes = new Uint8Array([...enc('["'), 0xed, 0xa0, 0x80, ...enc('"]')]);
    expectEveryCut(make, bytes, { frames: [], error: /element 0 is not valid UTF-8/ });
  });

  it('bounds memory: an element longer than maxFrameBytes fails as soon as the bound is passed', () => {
    const decoder = new JsonArrayFrameDecoder({ maxFrameBytes: 2048 });
    const frames: StreamFrame[] = [];
    decoder.decode(enc('[1,"'), frames);
    const block = enc('y'.repeat(1024));
    let fed = 0;
    expect(() => {
      for (; fed < 10_000_000; fed++) decoder.decode(block, frames);
    }).toThrow(JsonRpcResponseTooLargeError);
    expect(fed).toBe(1);
    expect(frames).toEqual([row(1)]);
    // An exact fit passes: 2048 bytes of element.
    const fits = `[${JSON.stringify('z'.repeat(2046))}]`;
    expectEveryCut(() => new JsonArrayFrameDecoder({ maxFrameBytes: 2048 }), enc(fits), { frames: [row('z'.repeat(2046)), end('end')] });
  });

  it('an envelope is bounded too', () => {
    const outcome = run(new JsonArrayFrameDecoder({ maxFrameBytes: 100 }), [enc('{"x":"' + 'a'.repeat(200))]);
    expect(outcome.error).toBeInstanceOf(JsonRpcResponseTooLargeError);
  });
});
