/**
 * One wire vocabulary, held together: what the server's encoders write (rows,
 * error frames, result_chunk rows, durable events), the client's decoders read back exactly, for
 * every format, cut at every byte position (and one byte at a time, and in three pieces).
 */
import { JsonArrayFrameDecoder, NdjsonFrameDecoder, ResultChunkAssembler, SseEventDecoder, SseFrameDecoder, type StreamFrame } from '@nest-jsonrpc/client';
import {
  encodeErrorObject,
  encodeErrorRow,
  encodeSseRetry,
  INTERRUPTED_EVENT_DATA,
  jsonArrayEncoder,
  ndjsonEncoder,
  serializeStreamRow,
  sseEncoder,
  SSE_END_FRAME,
  SSE_KEEP_ALIVE,
  type DurableStreamEvent,
  type ResultChunkRow,
  type RpcErrorObject,
  type StreamFrameEncoder,
} from '@nest-jsonrpc/protocol';
import { resultChunks } from '@nest-jsonrpc/server';
import { cuts, enc, run } from '../../libs/client/src/decoding/feed.spec-support.js';

/** Rows that stress the encoders: escaping, multi-byte UTF-8, a row shaped almost like an error frame. */
const ROWS: unknown[] = [
  { delta: 'héllo 😀 </script> \u2028\u2029 \n\r' },
  'a string row',
  42,
  null,
  [1, [2, { three: 3 }]],
  { error: { reason: 'not an error frame: no code, no message' } },
  { error: { code: 1, message: 'also a row: it has another member' }, other: true },
];
const ERROR: RpcErrorObject = { code: -32050, message: 'Failed at <step> 2 — ünïcode', data: { html: '</b>', n: [1, 2] } };

function encodeStream(encoder: StreamFrameEncoder, rows: readonly unknown[], error?: RpcErrorObject): string {
  let text = encoder.preamble;
  rows.forEach((row, i) => (text += encoder.row(serializeStreamRow(row), i)));
  if (error) text += encoder.error(encodeErrorObject(error), rows.length);
  return text + encoder.epilogue;
}

const FORMATS = [
  { name: 'NDJSON', encoder: ndjsonEncoder, decoder: () => new NdjsonFrameDecoder(), end: [] as StreamFrame[] },
  { name: 'SSE', encoder: sseEncoder, decoder: () => new SseFrameDecoder(), end: [{ type: 'end', reason: 'end' }] as StreamFrame[] },
  { name: 'JSON array', encoder: jsonArrayEncoder, decoder: () => new JsonArrayFrameDecoder(), end: [{ type: 'end', reason: 'end' }] as StreamFrame[] },
];

function expectSameAtEveryCut(text: string, make: () => { decode(c: Uint8Array, out: StreamFrame[]): void; finish(out: StreamFrame[]): void }, expected: StreamFrame[]): void {
  for (const { name, chunks } of cuts(enc(text))) {
    const outcome = run(make(), chunks);
    if (outcome.error) throw new Error(`[${name}] ${outcome.error.message}`);
    try {
      expect(outcome.frames).toEqual(expected);
    } catch (e) {
      (e as Error).message = `[${name}] ${(e as Error).message}`;
      throw e;
    }
  }
}

describe.each(FORMATS)('$name: server encoders -> client decoders, cut at every byte', ({ encoder, decoder, end }) => {
  const rowFrames: StreamFrame[] = ROWS.map((value) => ({ type: 'row', value }));

  it('rows (escaping, multi-byte characters, rows that merely look like errors) and the end', () => {
    expectSameAtEveryCut(encodeStream(encoder, ROWS), decoder, [...rowFrames, ...end]);
  });

  it('rows then an in-band error frame', () => {
    // NDJSON has no end marker: its error frame is the last line. SSE ends with `event: end`
    // after the error, which the decoder stops at; the array's `]` after `_error` likewise.
    const expected: StreamFrame[] = [...rowFrames, { type: 'error', error: ERROR }];
    expectSameAtEveryCut(encodeStream(encoder, ROWS, ERROR), decoder, expected);
  });

  it('an error frame before any row', () => {
    expectSameAtEveryCut(encodeStream(encoder, [], ERROR), decoder, [{ type: 'error', error: ERROR }]);
  });

  it('result_chunk rows, reassembled by the client into the original bytes', async () => {
    const original = 'ünïcödé 😀 '.repeat(40);
    const chunks: ResultChunkRow[] = [];
    for await (const chunk of resultChunks('r1', original, { chunkSize: 7 })) chunks.push(chunk);
    const binary = Uint8Array.from({ length: 100 }, (_, i) => (i * 37) % 256);
    for await (const chunk of resultChunks('r2', binary, { chunkSize: 16 })) chunks.push(chunk);
    const text = encodeStream(encoder, chunks);
    for (const { name, chunks: pieces } of [...cuts(enc(text))].filter((_, i) => i % 17 === 0)) {
      const outcome = run(decoder(), pieces);
      expect(outcome.error).toBeUndefined();
      const assembler = new ResultChunkAssembler();
      for (const frame of outcome.frames) if (frame.type === 'row') assembler.push(frame.value as ResultChunkRow);
      expect([name, assembler.assembleText('r1')]).toEqual([name, original]);
      expect([name, [...assembler.assemble('r2')]]).toEqual([name, [...binary]]);
    }
  });
});

describe('durable events: the attach route\'s SSE, read by the client\'s SSE event decoder', () => {
  const events: DurableStreamEvent[] = [
    { id: 1, event: 'chunk', data: serializeStreamRow({ delta: '</script> 😀' }) },
    { id: 2, event: 'progress', data: serializeStreamRow({ percent: 50 }) },
    { id: 3, event: 'error', data: encodeErrorRow(ERROR) },
  ];
  const text =
    encodeSseRetry(1500) +
    SSE_KEEP_ALIVE +
    events.map((e) => sseEncoder.row(e.data, e.id, { id: e.id, event: e.event })).join('') +
    SSE_END_FRAME;

  it('ids, event names and data come back byte-identical; retry is read; comments are skipped', () => {
    for (const { name, chunks } of cuts(enc(text))) {
      const decoder = new SseEventDecoder();
      const out: Array<{ id?: string; event?: string; data: string }> = [];
      for (const chunk of chunks) decoder.decode(chunk, out);
      decoder.finish(out);
      expect([name, out.map((e) => [e.id, e.event, e.data])]).toEqual([
        name,
        [
          ['1', 'chunk', events[0].data],
          ['2', 'progress', events[1].data],
          ['3', 'error', events[2].data],
          [undefined, 'end', '{}'],
        ],
      ]);
      expect(decoder.retryMs).toBe(1500);
    }
  });

  it('the stored terminal error is an error frame to the live SSE decoder too', () => {
    const interrupted = sseEncoder.row(INTERRUPTED_EVENT_DATA, 0, { id: 9, event: 'error' }) + SSE_END_FRAME;
    expectSameAtEveryCut(interrupted, () => new SseFrameDecoder(), [{ type: 'error', error: { code: -32603, message: 'Stream interrupted' } }]);
  });
});
