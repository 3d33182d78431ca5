import { JsonRpcProtocolError, JsonRpcResponseTooLargeError } from '../errors/client-errors.js';
import { enc, end, errorFrame, expectEveryCut, row, run } from './feed.spec-support.js';
import { SseEventDecoder, SseFrameDecoder, type SseEvent } from './sse-decoder.js';
import type { StreamFrame } from './stream-frame.js';

const make = () => new SseFrameDecoder();
const rows = [{ delta: 'Hel' }, { delta: 'lo 😀 中文' }, { html: '</script>', nl: 'a\nb' }, [1, 2], 'str', 0];
const sse = (eol: string) =>
  rows.map((r) => `data: ${JSON.stringify(r)}${eol}${eol}`).join('') + `event: end${eol}data: {}${eol}${eol}`;

describe('SseFrameDecoder (live stream SSE)', () => {
  it.each([
    ['LF', '\n'],
    ['CRLF', '\r\n'],
    ['CR', '\r'],
  ])('decodes rows and the end frame with %s line endings at every cut', (_name, eol) => {
    expectEveryCut(make, enc(sse(eol)), { frames: [...rows.map(row), end('end')] });
  });

  it('accepts a UTF-8 BOM at the start', () => {
    expectEveryCut(make, enc('\uFEFF' + sse('\n')), { frames: [...rows.map(row), end('end')] });
  });

  it('joins multi-line data with newlines (one JSON text over several data: lines)', () => {
    const text = 'data: {"a":\ndata: [1,\ndata:2]}\n\nevent: end\ndata: {}\n\n';
    expectEveryCut(make, enc(text), { frames: [row({ a: [1, 2] }), end('end')] });
  });

  it('ignores comments (keep-alives), id:, retry:, unknown fields and unknown event types; skips empty data', () => {
    const text =
      ': keep-alive\n\n:\n' +
      'id: 7\nretry: 1500\ndata: {"a":1}\n\n' +
      'bogus: field\ndata: {"b":2}\n\n' +
      'event: telemetry\ndata: not json but ignored\n\n' +
      'data:\n\n' +
      'data: \n\n' +
      'event: end\ndata: {}\n\n';
    expectEveryCut(make, enc(text), { frames: [row({ a: 1 }), row({ b: 2 }), end('end')] });
  });

  it('raises `event: error` as an error frame after the rows before it', () => {
    const text = 'data: {"i":1}\n\nevent: error\ndata: {"error":{"code":-32603,"message":"Internal error"}}\n\nevent: end\ndata: {}\n\n';
    expectEveryCut(make, enc(text), { frames: [row({ i: 1 }), errorFrame(-32603, 'Internal error')] });
  });

  it('understands durable rows (chunk, progress) and terminals (done, cancelled) served live', () => {
    expectEveryCut(make, enc('id: 1\nevent: progress\ndata: 0.5\n\nid: 2\nevent: chunk\ndata: {"x":1}\n\nid: 3\nevent: done\ndata: {}\n\n'), {
      frames: [row(0.5), row({ x: 1 }), end('done')],
    });
    expectEveryCut(make, enc('event: cancelled\ndata: {}\n\n'), { frames: [end('cancelled')] });
  });

  it('ignores anything after the end frame', () => {
    const outcome = run(make(), [enc('data: 1\n\nevent: end\ndata: {}\n\ndata: 2\n\ngarbage')]);
    expect(outcome).toEqual({ frames: [row(1), end('end')], error: undefined });
  });

  it('a body that ends without `event: end` is truncated, never a quiet end', () => {
    expectEveryCut(make, enc('data: {"i":1}\n\ndata: {"i":2}\n\n'), {
      frames: [row({ i: 1 }), row({ i: 2 })],
      error: /^JsonRpcStreamTruncatedError: SSE stream truncated after 2 row\(s\): the body ended without the final `event: end`$/,
    });
    // cut inside an event: the half event is not delivered
    expectEveryCut(make, enc('data: {"i":1}\n\ndata: {"i":2}'), { frames: [row({ i: 1 })], error: /JsonRpcStreamTruncatedError/ });
  });

  it('data that is not JSON, or an error event without an error object, is a protocol error', () => {
    const outcome = run(make(), [enc('data: {"i":1}\n\ndata: <html>\n\n')]);
    expect(outcome.frames).toEqual([row({ i: 1 })]);
    expect(outcome.error).toBeInstanceOf(JsonRpcProtocolError);
    expect(outcome.error!.message).toBe('SSE stream: event data is not JSON');
    expect(run(make(), [enc('event: error\ndata: {"oops":1}\n\n')]).error!.message).toBe(
      'SSE stream: `event: error` without an `{"error":{code,message}}` object',
    );
  });

  it('invalid UTF-8 is a protocol error', () => {
    expect(run(make(), [new Uint8Array([0x64, 0x61, 0x74, 0x61, 0x3a, 0x20, 0xc3, 0x28, 0x0a, 0x0a])]).error).toBeInstanceOf(JsonRpcProtocolError);
  });

  it('bounds memory: an endless line or an endless event fails at maxFrameBytes', () => {
    const decoder = new SseFrameDecoder({ maxFrameBytes: 4096 });
    const frames: StreamFrame[] = [];
    const block = enc('x'.repeat(1024));
    decoder.decode(enc('data: 1\n\ndata: '), frames);
    let error: unknown;
    let fed = 0;
    try {
      for (; fed < 10_000_000; fed++) decoder.decode(block, frames);
    } catch (e) {
      error = e;
    }
    expect(frames).toEqual([row(1)]);
    expect(fed).toBeLessThanOrEqual(4);
    expect(error).toBeInstanceOf(JsonRpcResponseTooLargeError);
    expect((error as Error).message).toBe('SSE stream: an event exceeds maxFrameBytes (4096 bytes); the client stopped reading');

    // many short data: lines that never end the event
    const events = new SseFrameDecoder({ maxFrameBytes: 4096 });
    let lines = 0;
    expect(() => {
      for (; lines < 1_000_000; lines++) events.decode(enc('data: 0123456789\n'), frames);
    }).toThrow(JsonRpcResponseTooLargeError);
    expect(lines).toBeLessThan(400);
  });
});

describe('SseEventDecoder (raw events, as attach uses them)', () => {
  it('keeps id, event and retry at every cut', () => {
    const text = 'retry: 2500\n\nid: 1\nevent: chunk\ndata: {"a":1}\n\nid: 2\nevent: progress\ndata: 0.25\n\n: ping\n\nid: 3\nevent: done\ndata: {}\n\n';
    const bytes = enc(text);
    for (let cut = 0; cut <= bytes.length; cut++) {
      const decoder = new SseEventDecoder();
      const out: SseEvent[] = [];
      decoder.decode(bytes.subarray(0, cut), out);
      decoder.decode(bytes.subarray(cut), out);
      expect(out).toEqual([
        { id: '1', event: 'chunk', data: '{"a":1}' },
        { id: '2', event: 'progress', data: '0.25' },
        { id: '3', event: 'done', data: '{}' },
      ]);
      expect(decoder.retryMs).toBe(2500);
    }
  });
});
