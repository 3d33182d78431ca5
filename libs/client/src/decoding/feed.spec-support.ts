/**
 * Helpers for the decoder specs: feed a decoder a byte sequence cut in every way that matters and
 * record what came out (frames, then the error if any), so that every cut can be compared with
 * the uncut result.
 */
import type { StreamFrame, StreamFrameDecoder } from './stream-frame.js';

export const enc = (text: string): Uint8Array => new TextEncoder().encode(text);

export interface Outcome {
  frames: StreamFrame[];
  error: Error | undefined;
}

/** Feeds `chunks` then finishes; stops at the first error, keeping frames emitted before it. */
export function run(decoder: StreamFrameDecoder, chunks: Uint8Array[]): Outcome {
  const frames: StreamFrame[] = [];
  try {
    for (const chunk of chunks) decoder.decode(chunk, frames);
    decoder.finish(frames);
    return { frames, error: undefined };
  } catch (error) {
    return { frames, error: error as Error };
  }
}

/** Every way of cutting `bytes` in two, plus one byte at a time, plus the whole thing. */
export function* cuts(bytes: Uint8Array): Generator<{ name: string; chunks: Uint8Array[] }> {
  yield { name: 'whole', chunks: [bytes] };
  for (let i = 1; i < bytes.length; i++) yield { name: `cut at ${i}`, chunks: [bytes.subarray(0, i), bytes.subarray(i)] };
  yield { name: 'one byte at a time', chunks: Array.from(bytes, (_, i) => bytes.subarray(i, i + 1)) };
  // Three-way cuts around every position, so a frame split over three chunks is covered too.
  for (let i = 1; i + 2 < bytes.length; i += 3) {
    yield { name: `cut at ${i} and ${i + 2}`, chunks: [bytes.subarray(0, i), bytes.subarray(i, i + 2), bytes.subarray(i + 2)] };
  }
}

/** Comparable form of an outcome: frames plus the error's class and message. */
export function summary(outcome: Outcome): unknown {
  return {
    frames: outcome.frames,
    error: outcome.error ? `${outcome.error.name}: ${outcome.error.message}` : undefined,
  };
}

/** Asserts that every cut of `text` gives the same outcome as `expected`, and returns it. */
export function expectEveryCut(make: () => StreamFrameDecoder, bytes: Uint8Array, expected: { frames: StreamFrame[]; error?: string | RegExp }): void {
  for (const { name, chunks } of cuts(bytes)) {
    const outcome = run(make(), chunks);
    try {
      expect(outcome.frames).toEqual(expected.frames);
      if (expected.error === undefined) expect(outcome.error).toBeUndefined();
      else expect(`${outcome.error?.name}: ${outcome.error?.message}`).toMatch(expected.error);
    } catch (e) {
      (e as Error).message = `[${name}] ${(e as Error).message}`;
      throw e;
    }
  }
}

export const row = (value: unknown): StreamFrame => ({ type: 'row', value });
export const end = (reason: StreamFrame & { type: 'end' } extends { reason: infer R } ? R : never = 'end'): StreamFrame => ({ type: 'end', reason });
export const errorFrame = (code: number, message: string, data?: unknown): StreamFrame => ({
  type: 'error',
  error: data === undefined ? { code, message } : { code, message, data },
});
