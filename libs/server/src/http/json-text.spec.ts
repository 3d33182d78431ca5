import { NOT_JSON, parseJsonText } from './json-text.js';

describe('parseJsonText', () => {
  it('parses JSON text of any top-level type', () => {
    expect(parseJsonText('{"a":[1,"x",null]}')).toEqual({ a: [1, 'x', null] });
    expect(parseJsonText('[]')).toEqual([]);
    expect(parseJsonText('null')).toBeNull();
    expect(parseJsonText(' 42 ')).toBe(42);
  });

  it.each([[undefined], [''], ['   '], ['{'], ['{"a":1,}'], ["{'a':1}"], ['NaN'], ['{"a":1} {"b":2}'], ['\u0000']])('%j is NOT_JSON', (text) => {
    expect(parseJsonText(text)).toBe(NOT_JSON);
  });

  it('tolerates a leading BOM', () => {
    expect(parseJsonText('\uFEFF{"a":1}')).toEqual({ a: 1 });
  });

  it('drops __proto__ keys at every depth, so nothing reaches Object.prototype', () => {
    const parsed = parseJsonText('{"a":1,"__proto__":{"polluted":true},"n":{"__proto__":{"polluted":true}},"l":[{"__proto__":{"x":1}}]}') as Record<string, any>;
    expect(parsed).toEqual({ a: 1, n: {}, l: [{}] });
    expect(Object.prototype.hasOwnProperty.call(parsed, '__proto__')).toBe(false);
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(Object.getPrototypeOf(parsed.n)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('drops constructor keys that carry a prototype; keeps an innocent "constructor" string', () => {
    expect(parseJsonText('{"constructor":{"prototype":{"polluted":true}},"b":2}')).toEqual({ b: 2 });
    expect(parseJsonText('{"constructor":"Alice"}')).toEqual({ constructor: 'Alice' });
  });
});
