import { paramsHash, stableJson } from './stable-params-hash.js';

describe('stableJson / paramsHash', () => {
  it('ignores key order at every depth, keeps array order', () => {
    expect(stableJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } })).toBe('{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}');
    expect(paramsHash({ b: 1, a: 2 })).toBe(paramsHash({ a: 2, b: 1 }));
    expect(paramsHash([1, 2])).not.toBe(paramsHash([2, 1]));
  });

  it('tells absent, empty object, empty array and null apart', () => {
    const all = [undefined, {}, [], null, '', 0].map(paramsHash);
    expect(new Set(all).size).toBe(all.length);
  });

  it('hashes long params to a fixed-size digest, unambiguous with inline ones', () => {
    const long = { text: 'x'.repeat(500) };
    expect(paramsHash(long)).toMatch(/^#[A-Za-z0-9_-]{43}$/);
    expect(paramsHash({ text: 'x'.repeat(500) })).toBe(paramsHash(long));
    expect(paramsHash({ text: 'x'.repeat(501) })).not.toBe(paramsHash(long));
  });

  it('escapes keys and strings, so no two values share a text', () => {
    expect(stableJson({ 'a":1,"b': 2 })).not.toBe(stableJson({ a: 1, b: 2 }));
  });
});
