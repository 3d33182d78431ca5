/**
 * Strict base64 (RFC 4648 §4, padded): no whitespace, no URL-safe alphabet, padding only at the
 * end, and the unused bits of the last symbol must be zero, so one byte string has exactly one
 * encoding. Hand-written because `atob` is forgiving (it skips whitespace and accepts missing
 * padding), `Buffer` is Node-only and `Uint8Array.fromBase64` is not in Node 20.
 */
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const VALUES = new Int16Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) VALUES[ALPHABET.charCodeAt(i)] = i;

function value(text: string, i: number): number {
  const c = text.charCodeAt(i);
  const v = c < 128 ? VALUES[c] : -1;
  if (v < 0) throw new SyntaxError(`invalid base64 character ${JSON.stringify(text[i])} at ${i}`);
  return v;
}

/** Decodes `text`; throws SyntaxError saying what is wrong. */
export function decodeBase64Strict(text: string): Uint8Array {
  const length = text.length;
  if (length % 4 !== 0) throw new SyntaxError(`base64 length ${length} is not a multiple of 4`);
  if (length === 0) return new Uint8Array(0);
  const padding = text.charCodeAt(length - 1) === 61 ? (text.charCodeAt(length - 2) === 61 ? 2 : 1) : 0;
  const out = new Uint8Array((length / 4) * 3 - padding);
  const full = padding === 0 ? length : length - 4;
  let o = 0;
  for (let i = 0; i < full; i += 4) {
    const n = (value(text, i) << 18) | (value(text, i + 1) << 12) | (value(text, i + 2) << 6) | value(text, i + 3);
    out[o++] = n >> 16;
    out[o++] = (n >> 8) & 0xff;
    out[o++] = n & 0xff;
  }
  if (padding === 2) {
    const a = value(text, full);
    const b = value(text, full + 1);
    if ((b & 0x0f) !== 0) throw new SyntaxError('non-canonical base64: unused bits of the last symbol are set');
    out[o] = (a << 2) | (b >> 4);
  } else if (padding === 1) {
    const a = value(text, full);
    const b = value(text, full + 1);
    const c = value(text, full + 2);
    if ((c & 0x03) !== 0) throw new SyntaxError('non-canonical base64: unused bits of the last symbol are set');
    out[o++] = (a << 2) | (b >> 4);
    out[o] = ((b & 0x0f) << 4) | (c >> 2);
  }
  return out;
}
