import type { Readable } from 'node:stream';

/** How reading a request body ended. */
export type BodyReading =
  /** The whole body, decoded as UTF-8 (JSON text is UTF-8). */
  | { readonly text: string }
  /** Past `limit` bytes: reading stopped, the rest is not buffered. */
  | { readonly tooLarge: true }
  /** The client went away (or the request failed) before the end. */
  | { readonly gone: true };

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
export function readRequestBody(req: Readable, limit: number): Promise<BodyReading> {
  return new Promise((resolve) => readBody(req, limit, resolve));
}

/**
 * {@link readRequestBody} with a callback, for a caller that goes on with one (Fastify's parser):
 * no Promise and no microtask per request. `done` runs once.
 */
export function readBody(req: Readable, limit: number, done: (reading: BodyReading) => void): void {
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
