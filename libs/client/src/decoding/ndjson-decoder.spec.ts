import { JsonRpcProtocolError, JsonRpcResponseTooLargeError, JsonRpcStreamTruncatedError } from '../errors/client-errors.js';
import { enc, errorFrame, expectEveryCut, row, run } from './feed.spec-support.js';
import { NdjsonFrameDecoder } from './ndjson-decoder.js';
import type { StreamFrame } from './stream-frame.js';

const make = () => new NdjsonFrameDecoder();

describe('NdjsonFrameDecoder', () => {
  const rows = [
    { i: 0, delta: 'token' },
    { text: 'é 😀 中文 \u2028 end' },
    { html: '</script><script>alert(1)</script>', nl: 'a\nb\r\nc' },
    ['nested', { deep: [1, 2, 3] }],
    'a bare string',
    42,
    null,
  ];
  const body = rows.map((r) => JSON.stringify(r) + '\n').join('');

  it('decodes every row the same whatever the chunking (every byte boundary, one byte at a time, UTF-8 split mid-character)', () => {
    expectEveryCut(make, enc(body), { frames: rows.map(row) });
  });

  it('accepts CRLF line endings and a UTF-8 BOM at the start', () => {
    const crlf = '\uFEFF' + rows.map((r) => JSON.stringify(r) + '\r\n').join('');
    expectEveryCut(make, enc(crlf), { frames: rows.map(row) });
  });

  it('treats a bare CR as JSON whitespace, not as a line end (NDJSON splits on LF only)', () => {
    expectEveryCut(make, enc('{"a":\r1}\r\n\r\n'), { frames: [row({ a: 1 })] });
    expectEveryCut(make, enc('{"a":1}\r{"b":2}\n'), { frames: [], error: /JsonRpcProtocolError: NDJSON stream: line 1 is not JSON/ });
  });

  it('keeps U+FEFF that is not at the very start (it is data, not a BOM)', () => {
    expectEveryCut(make, enc('"x"\n"\uFEFFy"\n'), { frames: [row('x'), row('\uFEFFy')] });
  });

  it('skips blank and whitespace-only lines', () => {
    expectEveryCut(make, enc('\n\n  \n{"a":1}\n\t\n{"b":2}\n\n'), { frames: [row({ a: 1 }), row({ b: 2 })] });
  });

  it('turns {"error":{...}} into an error frame after the rows before it', () => {
    const text = '{"i":1}\n{"i":2}\n{"error":{"code":-32002,"message":"Gone","data":{"why":"x"}}}\n';
    expectEveryCut(make, enc(text), { frames: [row({ i: 1 }), row({ i: 2 }), errorFrame(-32002, 'Gone', { why: 'x' })] });
  });

  it('only the exact error frame shape is an error: rows that merely have an `error` field are rows', () => {
    const text = '{"error":{"code":1,"message":"m"},"other":1}\n{"error":"text"}\n{"error":{"reason":"x"}}\n';
    expectEveryCut(make, enc(text), {
      frames: [row({ error: { code: 1, message: 'm' }, other: 1 }), row({ error: 'text' }), row({ error: { reason: 'x' } })],
    });
  });

  it('an error frame with a non-integer code is a protocol error, never a row: the stream must not seem to succeed', () => {
    for (const code of ['1.5', '"1"', 'null', '1e400']) {
      expectEveryCut(make, enc(`{"i":1}\n{"error":{"code":${code},"message":"m"}}\n`), {
        frames: [row({ i: 1 })],
        error: /JsonRpcProtocolError: NDJSON stream: line 2 is an error frame without a valid error object/,
      });
    }
  });

  it('an empty body is an empty stream; trailing whitespace without a newline is not a row', () => {
    expectEveryCut(make, enc(''), { frames: [] });
    expectEveryCut(make, enc('{"a":1}\n  '), { frames: [row({ a: 1 })] });
  });

  it('a last line without its newline is a truncated stream, never a quiet end', () => {
    expectEveryCut(make, enc('{"a":1}\n{"a":2}'), {
      frames: [row({ a: 1 })],
      error: /JsonRpcStreamTruncatedError: NDJSON stream truncated after 1 row\(s\): the last line \(7 bytes\) has no terminating newline/,
    });
    const outcome = run(make(), [enc('{"a":1}\n{"a":')]);
    expect(outcome.error).toBeInstanceOf(JsonRpcStreamTruncatedError);
    expect((outcome.error as JsonRpcStreamTruncatedError).rowsReceived).toBe(1);
  });

  it('garbage is a protocol error quoting it, after the good rows before it in the same chunk', () => {
    const outcome = run(make(), [enc('{"a":1}\n<html>502 Bad Gateway</html>\n{"a":2}\n')]);
    expect(outcome.frames).toEqual([row({ a: 1 })]);
    expect(outcome.error).toBeInstanceOf(JsonRpcProtocolError);
    expect(outcome.error!.message).toBe('NDJSON stream: line 2 is not JSON');
    expect((outcome.error as JsonRpcProtocolError).snippet).toBe('<html>502 Bad Gateway</html>');
  });

  it('invalid UTF-8 is a protocol error, not U+FFFD silently', () => {
    const bytes = new Uint8Array([...enc('{"a":"'), 0xff, 0xfe, ...enc('"}\n')]);
    expectEveryCut(make, bytes, { frames: [], error: /JsonRpcProtocolError: NDJSON stream: line 1 is not valid UTF-8/ });
  });

  it('bounds memory: a line longer than maxFrameBytes fails as soon as the bound is passed (the 10 GB line)', () => {
    const decoder = new NdjsonFrameDecoder({ maxFrameBytes: 1024 });
    const frames: StreamFrame[] = [];
    decoder.decode(enc('{"ok":1}\n'), frames);
    const block = new Uint8Array(64 * 1024).fill(0x61); // 'a' x 64 KiB, never a newline
    let fed = 0;
    let error: unknown;
    try {
      for (let i = 0; i < 160_000; i++) {
        // 10 GiB if nothing stopped it
        decoder.decode(block, frames);
        fed += block.length;
      }
    } catch (e) {
      error = e;
    }
    expect(frames).toEqual([row({ ok: 1 })]);
    expect(fed).toBe(0); // the first oversized chunk is refused before being buffered
    expect(error).toBeInstanceOf(JsonRpcResponseTooLargeError);
    expect((error as JsonRpcResponseTooLargeError).limit).toBe('maxFrameBytes');
    expect((error as Error).message).toBe('NDJSON stream: line 2 exceeds maxFrameBytes (1024 bytes); the client stopped reading');
  });

  it('the bound counts bytes across chunks and applies to a line that arrives whole', () => {
    const line = '"' + 'x'.repeat(100) + '"\n'; // 103 bytes with the newline, 102 without
    expectEveryCut(() => new NdjsonFrameDecoder({ maxFrameBytes: 102 }), enc(line), { frames: [row('x'.repeat(100))] });
    expectEveryCut(() => new NdjsonFrameDecoder({ maxFrameBytes: 101 }), enc(line), { frames: [], error: /JsonRpcResponseTooLargeError/ });
  });
});
