import type { Readable, Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';

/** How reading a request body ended. */
export type BodyReading =
  /** The whole body, decoded as UTF-8 (JSON text is UTF-8). */
  | { readonly text: string }
  /** Past `limit` bytes (sent, or inflated): reading stopped, the rest is not buffered. */
  | { readonly tooLarge: true }
  /** The client went away (or the request failed) before the end. */
  | { readonly gone: true }
  /** A compressed body that could not be inflated: not the coding it says, cut short, damaged. */
  | { readonly undecodable: true };

/** A new inflating stream of one content coding. */
export type Inflater = () => Transform;

/**
 * The content codings the reader inflates (RFC 9110, 8.4.1), as a 415's `Accept-Encoding` lists
 * them (`x-gzip` is read as `gzip`, as 8.4.1.3 asks; `identity` is always acceptable). The same
 * set as body-parser's, which inflates the bodies of an Express app's own routes (Node 20 has no
 * zstd).
 */
export const INFLATED_CODINGS = 'gzip, deflate, br';

const INFLATERS: ReadonlyMap<string, Inflater> = new Map<string, Inflater>([
  ['gzip', createGunzip],
  ['x-gzip', createGunzip],
  ['deflate', createInflate],
  ['br', createBrotliDecompress],
]);

/** A `Content-Encoding` the reader does not inflate: another coding, or several stacked. */
export const UNSUPPORTED_CODING: unique symbol = Symbol('unsupported-coding');

/**
 * The body is already inflated by what hands its stream over: a Fastify `preParsing` hook that
 * decompresses (`@fastify/compress`) leaves `Content-Encoding` as it was and marks its stream with
 * `receivedEncodedLength`, the bytes it has read off the wire (Fastify's own body reader holds
 * that to the body limit too, against zip bombs). Read as it comes, never inflated twice
 * (test/hardening/compressed-body.e2e-spec.ts has such a hook).
 */
export const INFLATED_UPSTREAM: unique symbol = Symbol('inflated-upstream');

/** How to read a body that has a `Content-Encoding` (see {@link readBody}). */
export type BodyDecoding = Inflater | typeof INFLATED_UPSTREAM;

/**
 * What a request's `Content-Encoding` asks of the reader: nothing (`undefined`: `identity` in any
 * case, or empty), the inflater of its coding, or {@link UNSUPPORTED_CODING}. Called only when
 * the header is there: a request without one costs its adapter one header read, nothing more.
 * Stacked codings (`gzip, br`) are refused as body-parser refuses them: no client sends them, and
 * each layer would be one more stream to bound.
 */
export function requestDecoding(contentEncoding: string): Inflater | undefined | typeof UNSUPPORTED_CODING {
  const coding = contentEncoding.trim().toLowerCase();
  if (coding === '' || coding === 'identity') return undefined;
  return INFLATERS.get(coding) ?? UNSUPPORTED_CODING;
}

/**
 * Reads `req` (a request, or the stream a Fastify `preParsing` hook made of it) to its end, at
 * most `limit` bytes: the module's own body reader, on Express and in the Fastify parser of the
 * routes without an `onRequest` hook (`platforms/fastify-platform.ts`). Bytes are
 * counted while they arrive, so nothing past the limit is buffered; the whole body is decoded
 * once at the end, so a character split across chunks stays whole.
 *
 * Hand-written rather than `raw-body` (what Express's own parsers use): the 413 must be answered
 * with the lingering close of `early-answer.ts`, which reads on where this stops, and the text is
 * always UTF-8 — a dozen lines, no charset tables.
 */
export function readRequestBody(req: Readable, limit: number, decoding?: BodyDecoding): Promise<BodyReading> {
  return new Promise((resolve) => readBody(req, limit, resolve, decoding));
}

/**
 * {@link readRequestBody} with a callback, for a caller that goes on with one (Fastify's parser):
 * no Promise and no microtask per request. `done` runs once. With `decoding` (a body with a
 * `Content-Encoding`) the body is inflated as it arrives ({@link readInflated}); without, it is
 * read as sent — the path every uncompressed request takes, unchanged.
 */
export function readBody(req: Readable, limit: number, done: (reading: BodyReading) => void, decoding?: BodyDecoding): void {
  if (decoding !== undefined) return readInflated(req, limit, done, decoding);
  const chunks: Buffer[] = [];
  let length = 0;
  const finish = (reading: BodyReading): void => {
    req.off('data', onData);
    req.off('end', onEnd);
    req.off('error', onGone);
    req.off('close', onGone);
    done(reading);
  };
  const onData = (chunk: Buffer): void => {
    length += chunk.length;
    if (length > limit) {
      // Held until the 413's lingering close reads (and discards) the rest.
      req.pause();
      return finish({ tooLarge: true });
    }
    chunks.push(chunk);
  };
  const onEnd = (): void => finish({ text: chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks, length).toString('utf8') });
  const onGone = (): void => finish({ gone: true });
  // `on`, not `once`: `finish` takes every listener off, and `once` would wrap each in a closure.
  req.on('data', onData);
  req.on('end', onEnd);
  req.on('error', onGone);
  req.on('close', onGone);
  // A request something paused before (an app's hook) does not flow by itself: Fastify's own
  // reader resumes it too.
  req.resume();
}

/** The bytes a decompressing `preParsing` hook has read off the wire (see {@link INFLATED_UPSTREAM}). */
function receivedEncodedLength(stream: Readable): number {
  const received = (stream as Readable & { receivedEncodedLength?: unknown }).receivedEncodedLength;
  return typeof received === 'number' ? received : 0;
}

/**
 * Reads a compressed body, inflating it as it arrives. `limit` bounds both the inflated bytes (a
 * zip bomb is refused as an oversize body is, and inflating stops there: at most one more zlib
 * chunk, 16 KiB, is ever made past it) and the bytes on the wire (a coding that inflates to
 * almost nothing cannot make the server read an endless upload; a declared `Content-Length` over
 * the limit is refused before this runs, so the wire is bounded the same way, chunked or not).
 *
 * The request is written into the inflater by hand rather than piped: a refusal must leave the
 * request paused and unread, for the lingering close of `early-answer.ts` to read and discard,
 * while the inflater is destroyed (zlib checks for that before each chunk it makes) and nothing
 * more is written into it. Backpressure holds: the request pauses while the inflater is full.
 */
function readInflated(req: Readable, limit: number, done: (reading: BodyReading) => void, decoding: BodyDecoding): void {
  const upstream = decoding === INFLATED_UPSTREAM;
  const inflater: Readable = upstream ? req : decoding();
  const writable = inflater as Transform;
  const chunks: Buffer[] = [];
  let length = 0;
  let wire = 0;
  let settled = false;
  const finish = (reading: BodyReading): void => {
    if (settled) return;
    settled = true;
    inflater.off('data', onData);
    inflater.off('end', onEnd);
    if (upstream) {
      // The hook's stream is piped from the request (`stream.pipeline`): destroying it would
      // destroy the request, and the 413 with it. Paused, it inflates no more; the Fastify
      // adapter unpipes the request from it, for the lingering read of the rest.
      inflater.off('close', onGone);
      if (!('text' in reading)) inflater.pause();
    } else {
      req.off('data', onWire);
      req.off('end', onWireEnd);
      req.off('error', onGone);
      req.off('close', onGone);
      writable.off('drain', onDrain);
      if (!('text' in reading)) req.pause();
      // Its `error` listener stays: a failure after this is not the reader's to answer.
      writable.destroy();
    }
    done(reading);
  };
  const onData = (chunk: Buffer): void => {
    length += chunk.length;
    if (length > limit || (upstream && receivedEncodedLength(inflater) > limit)) return finish({ tooLarge: true });
    chunks.push(chunk);
  };
  const onEnd = (): void => finish({ text: chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks, length).toString('utf8') });
  const onUndecodable = (): void => finish({ undecodable: true });
  const onGone = (): void => finish({ gone: true });
  const onDrain = (): void => void req.resume();
  const onWire = (chunk: Buffer): void => {
    wire += chunk.length;
    if (wire > limit) return finish({ tooLarge: true });
    if (!writable.write(chunk)) req.pause();
  };
  const onWireEnd = (): void => {
    // The request is over (its `close` follows, and is not the client leaving): the inflater ends.
    req.off('error', onGone);
    req.off('close', onGone);
    writable.end();
  };
  inflater.on('data', onData);
  inflater.on('end', onEnd);
  inflater.on('error', onUndecodable);
  if (upstream) inflater.on('close', onGone);
  else {
    writable.on('drain', onDrain);
    req.on('data', onWire);
    req.on('end', onWireEnd);
    req.on('error', onGone);
    req.on('close', onGone);
  }
  req.resume();
}
