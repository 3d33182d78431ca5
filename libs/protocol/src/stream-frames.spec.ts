import { StreamFormat } from './stream-format.js';
import {
  classifyStreamValue,
  encodeErrorObject,
  encodeErrorRow,
  encodeSseEvent,
  errorJsonOfErrorRow,
  frameEncoderFor,
  jsonArrayEncoder,
  ndjsonEncoder,
  sseEncoder,
  SSE_END_FRAME,
} from './stream-frames.js';
import { serializeStreamRow } from './stream-json.js';

const frame = (encoder: typeof ndjsonEncoder, rows: unknown[], error?: { code: number; message: string; data?: unknown }) =>
  encoder.preamble +
  rows.map((r, i) => encoder.row(serializeStreamRow(r), i)).join('') +
  (error ? encoder.error(encodeErrorObject(error), rows.length) : '') +
  encoder.epilogue;

describe('frame encoders', () => {
  it('NDJSON: one JSON value per line; error row', () => {
    expect(frame(ndjsonEncoder, [{ a: 1 }, 'x'])).toBe('{"a":1}\n"x"\n');
    expect(frame(ndjsonEncoder, [1], { code: -32603, message: 'Internal error' })).toBe('1\n{"error":{"code":-32603,"message":"Internal error"}}\n');
    expect(ndjsonEncoder.contentType).toBe('application/x-ndjson; charset=utf-8');
  });

  it('SSE: data events, error event, always an end event', () => {
    expect(frame(sseEncoder, [{ a: 1 }])).toBe('data: {"a":1}\n\nevent: end\ndata: {}\n\n');
    expect(frame(sseEncoder, [], { code: 5, message: 'm', data: [1] })).toBe(
      'event: error\ndata: {"error":{"code":5,"message":"m","data":[1]}}\n\nevent: end\ndata: {}\n\n',
    );
    expect(sseEncoder.keepAlive).toBe(':\n\n');
  });

  it('JSON array: progressive, error as the last element, always closed', () => {
    expect(frame(jsonArrayEncoder, [])).toBe('[]');
    expect(frame(jsonArrayEncoder, [1, { b: 2 }])).toBe('[1,{"b":2}]');
    expect(frame(jsonArrayEncoder, [], { code: 1, message: 'm' })).toBe('[{"_error":{"code":1,"message":"m"}}]');
    expect(frame(jsonArrayEncoder, [1], { code: 1, message: 'm' })).toBe('[1,{"_error":{"code":1,"message":"m"}}]');
    expect(JSON.parse(frame(jsonArrayEncoder, [1, 'two'], { code: 1, message: 'm' }))).toEqual([1, 'two', { _error: { code: 1, message: 'm' } }]);
  });

  it('encodeSseEvent: optional id and event (for durable streams), multi-line data split, injection refused', () => {
    expect(encodeSseEvent('{"x":1}', { id: 7, event: 'chunk' })).toBe('id: 7\nevent: chunk\ndata: {"x":1}\n\n');
    expect(encodeSseEvent('a\nb\r\nc')).toBe('data: a\ndata: b\ndata: c\n\n');
    expect(() => encodeSseEvent('x', { event: 'a\ndata: evil' })).toThrow(TypeError);
    expect(() => encodeSseEvent('x', { id: '1\r2' })).toThrow(TypeError);
    expect(SSE_END_FRAME).toBe('event: end\ndata: {}\n\n');
  });

  it('error frames are escaped like rows: a message carrying </script> stays inert in every format', () => {
    const error = { code: 1, message: '</script>', data: { html: '<b>' } };
    const escaped = '{"code":1,"message":"\\u003c/script>","data":{"html":"\\u003cb>"}}';
    const json = encodeErrorObject(error);
    expect(json).toBe(escaped);
    expect(ndjsonEncoder.error(json, 0)).toBe(`{"error":${escaped}}\n`);
    expect(sseEncoder.error(json, 0)).toBe(`event: error\ndata: {"error":${escaped}}\n\n`);
    expect(jsonArrayEncoder.error(json, 1)).toBe(`,{"_error":${escaped}}`);
    expect(JSON.parse(ndjsonEncoder.error(json, 0))).toEqual({ error });
  });

  it.each([[Number.NaN], [Number.POSITIVE_INFINITY], [1.5], [2 ** 53], ['1']])('an error code of %p is refused before it reaches the wire', (code) => {
    expect(() => encodeErrorObject({ code: code as number, message: 'm' })).toThrow(TypeError);
    expect(() => encodeErrorRow({ code: code as number, message: 'm' })).toThrow(/integer/);
  });

  it('errorJsonOfErrorRow gives back the error object of a stored error row, without parsing', () => {
    const row = encodeErrorRow({ code: -32603, message: 'Stream interrupted' });
    expect(errorJsonOfErrorRow(row)).toBe('{"code":-32603,"message":"Stream interrupted"}');
    expect(errorJsonOfErrorRow('{"a":1}')).toBeUndefined();
  });

  it('classifyStreamValue: only the exact frame shape is an error; a broken one is not a row either', () => {
    expect(classifyStreamValue({ error: { code: 1, message: 'm' } }, 'error')).toEqual({ kind: 'error', error: { code: 1, message: 'm' } });
    expect(classifyStreamValue({ error: { code: 1.5, message: 'm' } }, 'error')).toEqual({ kind: 'malformed-error' });
    expect(classifyStreamValue({ error: { message: 'm' } }, 'error')).toEqual({ kind: 'malformed-error' });
    expect(classifyStreamValue({ _error: { code: 1, message: 'm' } }, '_error')).toMatchObject({ kind: 'error' });
    for (const row of [{ error: { code: 1, message: 'm' }, more: 1 }, { error: 'text' }, { error: { reason: 'x' } }, [1], null, 'x', { _error: {} }]) {
      expect(classifyStreamValue(row, 'error')).toEqual({ kind: 'row' });
    }
  });

  it('frameEncoderFor knows the three formats and nothing else', () => {
    expect(frameEncoderFor(StreamFormat.Ndjson)).toBe(ndjsonEncoder);
    expect(frameEncoderFor(StreamFormat.Sse)).toBe(sseEncoder);
    expect(frameEncoderFor(StreamFormat.JsonArray)).toBe(jsonArrayEncoder);
    expect(frameEncoderFor('toString' as StreamFormat)).toBeUndefined();
  });
});

describe('serializeStreamRow', () => {
  it('one line, same value, inert in HTML and JS', () => {
    const value = { s: '</script><!-- \n \r \u2028 \u2029 😀 \u0000', n: null };
    const json = serializeStreamRow(value);
    expect(json).not.toMatch(/[<\n\r\u2028\u2029]/);
    expect(json).toContain('\\u003c/script>');
    expect(JSON.parse(json)).toEqual(value);
  });

  it('undefined is null; unserialisable values throw', () => {
    expect(serializeStreamRow(undefined)).toBe('null');
    expect(() => serializeStreamRow({ n: 1n })).toThrow(TypeError);
    const cycle: any = {};
    cycle.self = cycle;
    expect(() => serializeStreamRow(cycle)).toThrow(TypeError);
  });
});
