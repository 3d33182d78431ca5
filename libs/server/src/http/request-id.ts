import { randomFillSync } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { RpcHeader } from '@nest-jsonrpc/protocol';

/** Printable ASCII, no spaces, bounded: anything else a client sends is replaced, not echoed. */
const ACCEPTABLE_ID = /^[\x21-\x7e]{1,200}$/;

/** The request's `X-Request-Id` when it is sane, else a fresh UUID. */
export function requestIdOf(headers: IncomingHttpHeaders): string {
  const header = headers[RpcHeader.RequestId];
  return typeof header === 'string' && ACCEPTABLE_ID.test(header) ? header : newRequestId();
}

/** UUIDs drawn per `randomFillSync` call, as Node's own `randomUUID` batches them. */
const BATCH = 128;
const pool = Buffer.allocUnsafe(16 * BATCH);
let drawn = BATCH;
const text = Buffer.allocUnsafe(36);
const HEX = Buffer.from('0123456789abcdef', 'latin1');

/**
 * A random (version 4) UUID, the same bits as `crypto.randomUUID()`, written as one flat string.
 * Why not `randomUUID()`: it builds its text by concatenating 20 pieces, and Node's header check
 * (a regular expression run on every header value by `writeHead`) on such a string leaves V8's
 * fast path for the runtime — ~2,200 instructions per answer, measured with
 * `npm run bench:instructions` (bench/README.md); this text is made in one copy.
 */
export function newRequestId(): string {
  if (drawn === BATCH) {
    randomFillSync(pool);
    drawn = 0;
  }
  const start = 16 * drawn++;
  let at = 0;
  for (let i = 0; i < 16; i++) {
    let byte = pool[start + i];
    // RFC 9562: version 4 in the high nibble of byte 6, variant 10 in the high bits of byte 8.
    if (i === 6) byte = (byte & 0x0f) | 0x40;
    else if (i === 8) byte = (byte & 0x3f) | 0x80;
    if (i === 4 || i === 6 || i === 8 || i === 10) text[at++] = 0x2d;
    text[at++] = HEX[byte >> 4];
    text[at++] = HEX[byte & 0x0f];
  }
  return text.toString('latin1', 0, 36);
}
