/**
 * The recorded provider transcripts (see fixtures/README.md) and the chunkings they are replayed
 * under. Bedrock transcripts are event payloads encoded into AWS event-stream frames with the AWS
 * SDKs' codec, one Buffer per frame, so a chunking can split frames anywhere (even mid-prelude).
 */
import { EventStreamCodec } from '@smithy/core/event-streams';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { seededRandom } from '../../support/seeded-random.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const fixturesDir = join(here, '..', 'fixtures');

export type ProviderFolder = 'openai-chat' | 'openai-responses' | 'anthropic-messages' | 'gemini' | 'bedrock';

export function fixture(provider: ProviderFolder, file: string): Buffer {
  return readFileSync(join(fixturesDir, provider, file));
}

const codec = new EventStreamCodec((bytes) => Buffer.from(bytes).toString('utf8'), (text) => Buffer.from(text, 'utf8'));

/** One AWS event-stream frame of a ConverseStream event. */
export function bedrockEventFrame(eventType: string, payload: unknown): Buffer {
  return Buffer.from(
    codec.encode({
      headers: {
        ':event-type': { type: 'string', value: eventType },
        ':content-type': { type: 'string', value: 'application/json' },
        ':message-type': { type: 'string', value: 'event' },
      },
      body: Buffer.from(JSON.stringify(payload), 'utf8'),
    }),
  );
}

/** A Bedrock `.jsonl` transcript as the frames the API sends, one Buffer per frame. */
export function bedrockFrames(file: string): Buffer[] {
  const lines = fixture('bedrock', file).toString('utf8').split('\n').filter(Boolean);
  return lines.map((line) => {
    const event = JSON.parse(line) as Record<string, unknown>;
    if (typeof event.$recordedFrame === 'string') return Buffer.from(fixture('bedrock', event.$recordedFrame).toString('utf8').trim(), 'base64');
    const [eventType, payload] = Object.entries(event)[0];
    return bedrockEventFrame(eventType, payload);
  });
}

/** A deterministic generator, so "random" chunkings are the same on every run. */
export { seededRandom };

/** Splits a body into the pieces the fake server writes one by one. */
export type Chunking = { name: string; split(parts: Buffer[]): Buffer[] };

const joinAll = (parts: Buffer[]) => Buffer.concat(parts);

export const wholeBody: Chunking = { name: 'whole body', split: (parts) => [joinAll(parts)] };

export const oneByte: Chunking = {
  name: '1-byte chunks',
  split: (parts) => {
    const body = joinAll(parts);
    return Array.from({ length: body.length }, (_, i) => body.subarray(i, i + 1));
  },
};

export function randomSizes(seed: number, max = 64): Chunking {
  return {
    name: `random sizes 1..${max} (seed ${seed})`,
    split: (parts) => {
      const body = joinAll(parts);
      const next = seededRandom(seed);
      const out: Buffer[] = [];
      for (let i = 0; i < body.length; ) {
        const size = 1 + Math.floor(next() * max);
        out.push(body.subarray(i, i + size));
        i += size;
      }
      return out;
    },
  };
}

/**
 * Splits inside every multi-byte UTF-8 character (after its lead byte), so a decoder that turns
 * each network chunk into text on its own would produce U+FFFD. Throws if the body has none, so a
 * test claiming this chunking cannot silently test nothing.
 */
export const insideMultiByteCharacters: Chunking = {
  name: 'split inside multi-byte UTF-8 characters',
  split: (parts) => {
    const body = joinAll(parts);
    const cuts: number[] = [];
    for (let i = 0; i < body.length; i++) if (body[i] >= 0xc0) cuts.push(i + 1);
    if (!cuts.length) throw new Error('this body has no multi-byte UTF-8 character to split');
    const out: Buffer[] = [];
    let from = 0;
    for (const cut of cuts) {
      out.push(body.subarray(from, cut));
      from = cut;
    }
    out.push(body.subarray(from));
    return out;
  },
};

/** Bedrock: every frame split inside its 12-byte prelude (after 5 bytes) and again inside its payload. */
export const framesSplitMidPrelude: Chunking = {
  name: 'frames split mid-prelude',
  split: (frames) => {
    const out: Buffer[] = [];
    for (const frame of frames) {
      const middle = 12 + Math.floor((frame.length - 16) / 2);
      out.push(frame.subarray(0, 5), frame.subarray(5, middle), frame.subarray(middle));
    }
    return out;
  },
};

/** Every chunking a transcript must give the same events under. */
export const sseChunkings: Chunking[] = [wholeBody, oneByte, randomSizes(7), randomSizes(2024, 200)];
export const bedrockChunkings: Chunking[] = [wholeBody, oneByte, randomSizes(7), framesSplitMidPrelude];
