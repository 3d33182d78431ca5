import { resultChunks } from './result-chunks.js';
import type { ResultChunkRow } from '@nest-jsonrpc/protocol';

const collect = async (iterable: AsyncIterable<ResultChunkRow>) => {
  const rows: ResultChunkRow[] = [];
  for await (const row of iterable) rows.push(row);
  return rows;
};

async function* pieces<T>(...items: T[]): AsyncGenerator<T> {
  for (const item of items) yield item;
}

describe('resultChunks', () => {
  it('a string in utf8 chunks of chunkSize bytes, chunk_seq from 0, last more:false', async () => {
    const rows = await collect(resultChunks('r1', 'abcdefghij', { chunkSize: 4 }));
    expect(rows).toEqual([
      { type: 'result_chunk', result_id: 'r1', chunk_seq: 0, data: 'abcd', encoding: 'utf8', more: true },
      { type: 'result_chunk', result_id: 'r1', chunk_seq: 1, data: 'efgh', encoding: 'utf8', more: true },
      { type: 'result_chunk', result_id: 'r1', chunk_seq: 2, data: 'ij', encoding: 'utf8', more: false },
    ]);
  });

  it('an exact multiple of chunkSize has no empty tail chunk', async () => {
    const rows = await collect(resultChunks('r', 'abcdef', { chunkSize: 3 }));
    expect(rows.map((r) => [r.data, r.more])).toEqual([['abc', true], ['def', false]]);
  });

  it('an empty source is one empty last chunk', async () => {
    for (const source of ['', new Uint8Array(0), pieces<string>(), pieces<string | Uint8Array>('', new Uint8Array(0))]) {
      const rows = await collect(resultChunks('e', source, { encoding: 'utf8' }));
      expect(rows).toEqual([{ type: 'result_chunk', result_id: 'e', chunk_seq: 0, data: '', encoding: 'utf8', more: false }]);
    }
  });

  it('utf8 never splits a character, across any piece boundaries, and reassembles exactly', async () => {
    const text = 'a😀é日本語b€ c'.repeat(50);
    const bytes = Buffer.from(text, 'utf8');
    for (const chunkSize of [1, 2, 3, 4, 5, 7, 64]) {
      // The source cut at awkward byte offsets, in the middle of characters.
      const cut: Uint8Array[] = [];
      for (let i = 0; i < bytes.length; i += 5) cut.push(bytes.subarray(i, i + 5));
      const rows = await collect(resultChunks('u', pieces(...cut), { encoding: 'utf8', chunkSize }));
      expect(rows.map((r) => r.data).join('')).toBe(text);
      for (const row of rows) {
        expect(row.data).not.toContain('\uFFFD');
        const size = Buffer.byteLength(row.data);
        // At most chunkSize bytes, unless one character is bigger than chunkSize.
        expect(size <= chunkSize || [...row.data].length === 1).toBe(true);
      }
      expect(rows.map((r) => r.chunk_seq)).toEqual(rows.map((_, i) => i));
      expect(rows.filter((r) => !r.more)).toHaveLength(1);
      expect(rows.at(-1)!.more).toBe(false);
    }
  });

  it('base64: every chunk decodes on its own to chunkSize source bytes', async () => {
    const bytes = Uint8Array.from({ length: 1000 }, (_, i) => (i * 7) & 0xff);
    const rows = await collect(resultChunks('b', pieces(bytes.subarray(0, 333), bytes.subarray(333, 334), bytes.subarray(334)), { chunkSize: 100 }));
    expect(rows).toHaveLength(10);
    for (const row of rows) {
      expect(row.encoding).toBe('base64');
      expect(Buffer.from(row.data, 'base64')).toHaveLength(100);
    }
    expect(Buffer.concat(rows.map((r) => Buffer.from(r.data, 'base64')))).toEqual(Buffer.from(bytes));
  });

  it('defaults: utf8 for a string, base64 otherwise, 64 KiB chunks', async () => {
    expect((await collect(resultChunks('d', 'x')))[0].encoding).toBe('utf8');
    const big = new Uint8Array(65_536 * 2 + 1);
    const rows = await collect(resultChunks('d', big));
    expect(rows.map((r) => [r.encoding, Buffer.from(r.data, 'base64').length])).toEqual([
      ['base64', 65_536],
      ['base64', 65_536],
      ['base64', 1],
    ]);
  });

  it('a string source in base64 encodes its UTF-8 bytes', async () => {
    const rows = await collect(resultChunks('s', 'é', { encoding: 'base64' }));
    expect(Buffer.from(rows[0].data, 'base64').toString('utf8')).toBe('é');
  });

  it('checks its arguments at once', () => {
    expect(() => resultChunks('', 'x')).toThrow('resultId must be a non-empty string');
    expect(() => resultChunks('r', 'x', { chunkSize: 0 })).toThrow('chunkSize must be a positive integer');
    expect(() => resultChunks('r', 'x', { chunkSize: 1.5 })).toThrow('chunkSize must be a positive integer');
    expect(() => resultChunks('r', 'x', { encoding: 'hex' as 'utf8' })).toThrow('encoding must be "utf8" or "base64"');
    expect(() => resultChunks('r', 42 as unknown as string)).toThrow('source must be a string, a Uint8Array');
  });

  it('a source yielding something else fails when iterated', async () => {
    await expect(collect(resultChunks('r', pieces(1 as unknown as string)))).rejects.toThrow('the source yielded number');
  });
});
