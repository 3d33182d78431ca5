import { JsonPathAssembler, parseJsonPath } from './json-path-assembler.js';

describe('JsonPathAssembler (Gemini streamed function-call arguments)', () => {
  it('parses the JSON paths Gemini sends', () => {
    expect(parseJsonPath('$.location')).toEqual(['location']);
    expect(parseJsonPath('$.stops[1].name')).toEqual(['stops', 1, 'name']);
    expect(parseJsonPath(`$["a b"]['c'].d`)).toEqual(['a b', 'c', 'd']);
    for (const bad of ['location', '$.', '$[x]', '$[', '$..a', '$[]', '$["a']) expect(parseJsonPath(bad)).toEqual([]);
  });

  it('appends continued string pieces and sets scalars, nested objects and arrays', () => {
    const a = new JsonPathAssembler();
    a.add({ jsonPath: '$.city', stringValue: 'San Fr', willContinue: true });
    a.add({ jsonPath: '$.days', numberValue: 3 });
    a.add({ jsonPath: '$.city', stringValue: 'ancisco', willContinue: true });
    a.add({ jsonPath: '$.city', stringValue: '' });
    a.add({ jsonPath: '$.stops[0].name', stringValue: 'Oakland' });
    a.add({ jsonPath: '$.metric', boolValue: false });
    a.add({ jsonPath: '$.note', nullValue: 'NULL_VALUE' });
    a.add({ jsonPath: '$.ignored' });
    expect(a.take()).toEqual({ city: 'San Francisco', days: 3, stops: [{ name: 'Oakland' }], metric: false, note: null });
    expect(a.take()).toEqual({});
  });

  it('a new string value at a closed path replaces, and prototype keys are never written', () => {
    const a = new JsonPathAssembler();
    a.add({ jsonPath: '$.q', stringValue: 'first' });
    a.add({ jsonPath: '$.q', stringValue: 'second' });
    a.add({ jsonPath: '$.__proto__.polluted', stringValue: 'yes' });
    a.add({ jsonPath: '$.x.constructor', stringValue: 'yes' });
    const out = a.take();
    expect(out.q).toBe('second');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
  });
});
