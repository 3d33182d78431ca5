import { serializeBatch, serializeError, serializeErrorObject, serializeId, serializeResult, serializeSuccess } from './response.js';

describe('response serialisation', () => {
  it('a success has jsonrpc, result, id in the spec\'s order', () => {
    expect(serializeSuccess(1, '19')).toBe('{"jsonrpc":"2.0","result":19,"id":1}');
    expect(serializeSuccess('a"b', '{"x":[1]}')).toBe('{"jsonrpc":"2.0","result":{"x":[1]},"id":"a\\"b"}');
    expect(JSON.parse(serializeSuccess(null, 'null'))).toEqual({ jsonrpc: '2.0', result: null, id: null });
  });

  it('an error carries data only when there is some', () => {
    expect(serializeError(null, { code: -32700, message: 'Parse error' })).toBe('{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"},"id":null}');
    expect(serializeError('x', { code: -32602, message: 'Invalid params', data: [{ path: 'a', message: 'm', code: null }] })).toBe(
      '{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params","data":[{"path":"a","message":"m","code":null}]},"id":"x"}',
    );
    expect(serializeErrorObject({ code: 1, message: 'n', data: null })).toBe('{"code":1,"message":"n","data":null}');
    expect(serializeErrorObject({ code: 1, message: 'quote " and \\ and \u2028' })).toBe(JSON.stringify({ code: 1, message: 'quote " and \\ and \u2028' }));
  });

  it('an error code that is not an integer never reaches the wire: serialising it throws', () => {
    for (const code of [Number.NaN, Number.POSITIVE_INFINITY, 1.5]) {
      expect(() => serializeError(1, { code, message: 'm' })).toThrow(TypeError);
    }
  });

  it('ids: strings are JSON-escaped, numbers kept exact, null/undefined become null', () => {
    expect(serializeId('</script>')).toBe('"</script>"');
    expect(serializeId('line\nbreak')).toBe('"line\\nbreak"');
    expect(serializeId(1.5)).toBe('1.5');
    expect(serializeId(-0)).toBe('0');
    expect(serializeId(1e21)).toBe('1e+21');
    expect(serializeId(null)).toBe('null');
    expect(serializeId(undefined)).toBe('null');
    for (const id of ['a', 1.5, 1e21, 0]) expect(JSON.parse(serializeId(id))).toBe(id);
  });

  it('results: undefined becomes null; values JSON cannot hold throw', () => {
    expect(serializeResult(undefined)).toBe('null');
    expect(serializeResult(0)).toBe('0');
    expect(serializeResult({ a: undefined, b: 1 })).toBe('{"b":1}');
    expect(serializeResult({ toJSON: () => 'custom' })).toBe('"custom"');
    expect(() => serializeResult(BigInt(1))).toThrow(TypeError);
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(() => serializeResult(cycle)).toThrow(TypeError);
  });

  it('numbers and booleans are written as JSON.stringify writes them, non-finite numbers as null', () => {
    const values = [0, -0, 1, -1, 1.5, 0.1 + 0.2, 1e21, 1e-7, 5e-324, Number.MAX_SAFE_INTEGER + 2, -1.7976931348623157e308, NaN, Infinity, -Infinity, true, false];
    for (const value of values) expect(serializeResult(value)).toBe(JSON.stringify(value));
    expect(serializeResult(NaN)).toBe('null');
    expect(serializeResult(-0)).toBe('0');
    // A boxed number is an object, not a number: it still goes through JSON.stringify, which unboxes it.
    expect(serializeResult(Object(2))).toBe('2');
  });

  it('a batch joins its items in an array', () => {
    expect(serializeBatch(['{"a":1}', '{"b":2}'])).toBe('[{"a":1},{"b":2}]');
    expect(serializeBatch(['{"a":1}'])).toBe('[{"a":1}]');
  });
});
