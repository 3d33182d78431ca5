import { ResultChunkError } from '../errors/client-errors.js';
import type { ResultChunkRow } from './result-chunk.js';
import { ResultChunkAssembler } from './result-chunk-assembler.js';
import { decodeBase64Strict } from './strict-base64.js';

const chunk = (seq: number, data: string, more: boolean, extra: Partial<ResultChunkRow> = {}): ResultChunkRow => ({
  type: 'result_chunk',
  result_id: 'r1',
  chunk_seq: seq,
  data,
  encoding: 'utf8',
  more,
  ...extra,
});
const b64 = (seq: number, data: string, more: boolean, id = 'f1'): ResultChunkRow =>
  chunk(seq, data, more, { encoding: 'base64', result_id: id });
const toB64 = (bytes: number[]) => btoa(String.fromCharCode(...bytes));

function expectChunkError(fn: () => unknown, message: RegExp, resultId: string | undefined, chunkSeq: number | undefined) {
  let error: unknown;
  try {
    fn();
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(ResultChunkError);
  const e = error as ResultChunkError;
  expect(e.message).toMatch(message);
  expect(e.message).toContain(`(result_id ${JSON.stringify(resultId)}, chunk_seq ${chunkSeq ?? 'none'})`);
  expect(e.resultId).toBe(resultId);
  expect(e.chunkSeq).toBe(chunkSeq);
}

describe('ResultChunkAssembler', () => {
  it('assembles utf8 chunks, in order and out of order, as text and as bytes', () => {
    for (const order of [[0, 1, 2], [2, 0, 1], [1, 2, 0]]) {
      const a = new ResultChunkAssembler();
      const parts = [chunk(0, 'héllo ', true), chunk(1, '😀 wörld', true), chunk(2, '!', false)];
      for (const i of order) {
        expect(a.isComplete('r1')).toBe(false);
        a.push(parts[i]);
      }
      expect(a.isComplete('r1')).toBe(true);
      expect(a.assembleText('r1')).toBe('héllo 😀 wörld!');
      expect(new TextDecoder().decode(a.assemble('r1'))).toBe('héllo 😀 wörld!');
    }
  });

  it('assembles base64 chunks decoded independently, with every byte value', () => {
    const bytes = Array.from({ length: 256 }, (_, i) => i);
    const a = new ResultChunkAssembler();
    a.push(b64(2, toB64(bytes.slice(200)), false));
    a.push(b64(0, toB64(bytes.slice(0, 100)), true));
    expect(a.isComplete('f1')).toBe(false);
    a.push(b64(1, toB64(bytes.slice(100, 200)), true));
    expect(a.isComplete('f1')).toBe(true);
    expect(Array.from(a.assemble('f1'))).toEqual(bytes);
  });

  it('an empty result is one empty final chunk', () => {
    const a = new ResultChunkAssembler();
    a.push(chunk(0, '', false));
    a.push(b64(0, '', false));
    expect(a.assembleText('r1')).toBe('');
    expect(a.assemble('f1')).toEqual(new Uint8Array(0));
  });

  it('keeps several results apart and lists them', () => {
    const a = new ResultChunkAssembler();
    a.push(chunk(0, 'a', true));
    a.push(chunk(0, 'b', false, { result_id: 'r2' }));
    a.push(chunk(1, 'c', false));
    expect(a.resultIds()).toEqual(['r1', 'r2']);
    expect(a.assembleText('r1')).toBe('ac');
    expect(a.assembleText('r2')).toBe('b');
    expect(a.delete('r1')).toBe(true);
    expectChunkError(() => a.assemble('r1'), /unknown result/, 'r1', undefined);
  });

  it('ignores an identical duplicate', () => {
    const a = new ResultChunkAssembler();
    a.push(chunk(0, 'x', true));
    a.push(chunk(0, 'x', true));
    a.push(chunk(1, 'y', false));
    a.push(chunk(1, 'y', false));
    expect(a.assembleText('r1')).toBe('xy');
  });

  it('push throws on a conflicting duplicate (other data or other `more`)', () => {
    const a = new ResultChunkAssembler();
    a.push(chunk(0, 'x', true));
    expectChunkError(() => a.push(chunk(0, 'X', true)), /conflicting duplicate/, 'r1', 0);
    expectChunkError(() => a.push(chunk(0, 'x', false)), /conflicting duplicate/, 'r1', 0);
    a.push(chunk(1, 'y', false));
    expect(a.assembleText('r1')).toBe('xy'); // the refused rows changed nothing
  });

  it('push throws on a chunk after the final one, and on a final chunk with a later one already there', () => {
    const a = new ResultChunkAssembler();
    a.push(chunk(0, 'x', true));
    a.push(chunk(1, 'y', false));
    expectChunkError(() => a.push(chunk(2, 'z', true)), /chunk after the final one \(chunk_seq 1 had more: false\)/, 'r1', 2);
    expectChunkError(() => a.push(chunk(5, 'z', false)), /chunk after the final one/, 'r1', 5);
    const b = new ResultChunkAssembler();
    b.push(chunk(3, 'x', true));
    expectChunkError(() => b.push(chunk(1, 'y', false)), /final chunk, but chunk_seq 3 came after it/, 'r1', 1);
  });

  it('push throws on mixed encodings within one result', () => {
    const a = new ResultChunkAssembler();
    a.push(chunk(0, 'x', true));
    expectChunkError(() => a.push(chunk(1, 'eQ==', false, { encoding: 'base64' })), /encoding "base64" differs from the result's "utf8"/, 'r1', 1);
  });

  it.each([
    ['whitespace', 'AA A'],
    ['a newline', 'AAAA\nAAAA'],
    ['missing padding', 'QQ'],
    ['the URL-safe alphabet', 'a-_b'],
    ['padding in the middle', 'QQ==QQ=='],
    ['non-canonical trailing bits', 'QR=='],
    ['three padding characters', 'Q==='],
    ['non-ASCII', 'QUJD\u00e9'],
  ])('push throws on bad base64 (%s), strictly, per chunk', (_what, data) => {
    const a = new ResultChunkAssembler();
    a.push(b64(0, 'QUJD', true));
    expectChunkError(() => a.push(b64(1, data, false)), /bad base64/, 'f1', 1);
  });

  it('push throws when a result would pass maxBytes (decoded bytes, utf8 counted in UTF-8)', () => {
    const a = new ResultChunkAssembler({ maxBytes: 10 });
    a.push(chunk(0, 'é'.repeat(4), true)); // 8 bytes
    expectChunkError(() => a.push(chunk(1, 'abc', false)), /result exceeds maxBytes \(10 bytes\)/, 'r1', 1);
    a.push(chunk(1, 'ab', false)); // 2 bytes: exactly 10
    expect(a.assembleText('r1')).toBe('éééé' + 'ab');
    const b = new ResultChunkAssembler({ maxBytes: 4 });
    b.push(b64(0, toB64([1, 2, 3]), true));
    expectChunkError(() => b.push(b64(1, toB64([4, 5]), false)), /exceeds maxBytes/, 'f1', 1);
  });

  it.each([
    ['a non-object', 'nope', undefined, undefined, /not an object/],
    ['a wrong type', { ...chunk(0, 'x', true), type: 'row' }, 'r1', 0, /`type` is not "result_chunk"/],
    ['an empty result_id', { ...chunk(0, 'x', true), result_id: '' }, '', 0, /`result_id`/],
    ['a negative chunk_seq', chunk(-1, 'x', true), 'r1', -1, /`chunk_seq`/],
    ['a fractional chunk_seq', chunk(1.5, 'x', true), 'r1', 1.5, /`chunk_seq`/],
    ['non-string data', { ...chunk(0, 'x', true), data: 5 }, 'r1', 0, /`data`/],
    ['an unknown encoding', { ...chunk(0, 'x', true), encoding: 'hex' }, 'r1', 0, /`encoding`/],
    ['a missing more', { ...chunk(0, 'x', true), more: undefined }, 'r1', 0, /`more`/],
  ])('push throws on a malformed row: %s', (_what, row, id, seq, message) => {
    expectChunkError(() => new ResultChunkAssembler().push(row as ResultChunkRow), message, id as string | undefined, seq as number | undefined);
  });

  it('assemble throws for an unknown result, a missing final chunk, or a gap', () => {
    const a = new ResultChunkAssembler();
    expectChunkError(() => a.assemble('nope'), /unknown result/, 'nope', undefined);
    a.push(chunk(0, 'x', true));
    a.push(chunk(1, 'y', true));
    expectChunkError(() => a.assemble('r1'), /the final chunk \(more: false\) has not arrived/, 'r1', 1);
    a.push(chunk(3, 'w', false));
    expect(a.isComplete('r1')).toBe(false);
    expectChunkError(() => a.assembleText('r1'), /missing chunk/, 'r1', 2);
    a.push(chunk(2, 'z', true));
    expect(a.assembleText('r1')).toBe('xyzw');
  });

  it('a refused first chunk leaves no trace of its result', () => {
    const a = new ResultChunkAssembler();
    expect(() => a.push(b64(0, '!!!!', false))).toThrow(ResultChunkError);
    expectChunkError(() => a.assemble('f1'), /unknown result/, 'f1', undefined);
    expect(a.resultIds()).toEqual([]);
  });

  it('assembleText of a base64 result that is not UTF-8 throws', () => {
    const a = new ResultChunkAssembler();
    a.push(b64(0, toB64([0xff, 0xfe]), false));
    expectChunkError(() => a.assembleText('f1'), /not valid UTF-8/, 'f1', undefined);
  });
});

describe('decodeBase64Strict', () => {
  it('round-trips every length 0..20 against btoa', () => {
    for (let n = 0; n <= 20; n++) {
      const bytes = Array.from({ length: n }, (_, i) => (i * 37 + n) & 0xff);
      expect(Array.from(decodeBase64Strict(toB64(bytes)))).toEqual(bytes);
    }
  });
});
