import { PassThrough, type Transform } from 'node:stream';
import { brotliCompressSync, createGunzip, createInflate, deflateSync, gzipSync } from 'node:zlib';
import { INFLATED_UPSTREAM, readRequestBody, requestDecoding, UNSUPPORTED_CODING, type BodyReading, type Inflater } from './request-body.js';

/** A gunzip the test can look at once the reading is over. */
function watchedGunzip(): { inflater: Inflater; made: () => Transform } {
  let made: Transform | undefined;
  return {
    inflater: () => (made = createGunzip()),
    made: () => made!,
  };
}

/** Every listener the reader put on the request is gone again. */
function listenersLeft(req: PassThrough): number {
  return ['data', 'end', 'error', 'close'].reduce((sum, event) => sum + req.listenerCount(event), 0);
}

describe('requestDecoding', () => {
  it.each([
    ['gzip', createGunzip],
    [' GZIP ', createGunzip],
    ['x-gzip', createGunzip],
    ['X-Gzip', createGunzip],
    ['deflate', createInflate],
  ])('%j inflates', (header, inflater) => {
    expect(requestDecoding(header)).toBe(inflater);
  });

  it('br inflates with Brotli', () => {
    expect(typeof requestDecoding('br')).toBe('function');
  });

  it.each(['identity', 'IDENTITY', '', '  '])('%j is read as sent', (header) => {
    expect(requestDecoding(header)).toBeUndefined();
  });

  it.each(['zstd', 'compress', 'gzip, br', 'gzip,gzip', 'gzip, identity', 'deflate-raw', 'gzip;q=1'])('%j is not inflated', (header) => {
    expect(requestDecoding(header)).toBe(UNSUPPORTED_CODING);
  });
});

describe('readRequestBody with a Content-Encoding', () => {
  const text = '{"jsonrpc":"2.0","method":"echo","params":["héllo ✓"],"id":1}';

  it('inflates a body that arrives a byte at a time, a character split across chunks kept whole; the inflater is released', async () => {
    const req = new PassThrough();
    const gunzip = watchedGunzip();
    const reading = readRequestBody(req, 1024, gunzip.inflater);
    for (const byte of gzipSync(text)) req.write(Buffer.from([byte]));
    req.end();
    expect(await reading).toEqual({ text });
    expect(gunzip.made().destroyed).toBe(true);
    expect(listenersLeft(req)).toBe(0);
  });

  it.each([
    ['deflate', deflateSync(text)],
    ['br', brotliCompressSync(text)],
  ])('inflates %s', async (coding, body) => {
    const req = new PassThrough();
    const reading = readRequestBody(req, 1024, requestDecoding(coding) as Inflater);
    req.end(body);
    expect(await reading).toEqual({ text });
  });

  it('a bomb: tooLarge once the inflated bytes pass the limit, the request paused for the lingering close, the inflater destroyed', async () => {
    const req = new PassThrough();
    const gunzip = watchedGunzip();
    const reading = readRequestBody(req, 64 * 1024, gunzip.inflater);
    req.write(gzipSync(Buffer.alloc(10 * 1024 * 1024)));
    expect(await reading).toEqual({ tooLarge: true });
    expect(req.isPaused()).toBe(true);
    expect(gunzip.made().destroyed).toBe(true);
    expect(listenersLeft(req)).toBe(0);
    // What the client sends on is for the lingering close to read, not the inflater.
    expect(() => req.write(Buffer.alloc(16))).not.toThrow();
  });

  it('the wire is bounded too: tooLarge past the limit of compressed bytes, however little they inflate to', async () => {
    const req = new PassThrough();
    const reading = readRequestBody(req, 1000, createInflate);
    req.write(Buffer.from([0x78, 0x9c]));
    for (let i = 0; i < 300; i++) req.write(Buffer.from([0x00, 0x00, 0x00, 0xff, 0xff]));
    expect(await reading).toEqual({ tooLarge: true });
  });

  it.each([
    ['not gzip', Buffer.from(text)],
    ['truncated', gzipSync(text).subarray(0, 20)],
    ['empty', Buffer.alloc(0)],
  ])('%s: undecodable, the request paused, the inflater destroyed', async (_label, body) => {
    const req = new PassThrough();
    const gunzip = watchedGunzip();
    const reading = readRequestBody(req, 1024, gunzip.inflater);
    req.end(body);
    expect(await reading).toEqual({ undecodable: true });
    expect(gunzip.made().destroyed).toBe(true);
    expect(listenersLeft(req)).toBe(0);
  });

  it('the client leaving mid-body: gone, the inflater destroyed', async () => {
    const req = new PassThrough();
    const gunzip = watchedGunzip();
    const reading = readRequestBody(req, 1024, gunzip.inflater);
    req.write(gzipSync(text).subarray(0, 12));
    req.destroy();
    expect(await reading).toEqual({ gone: true });
    expect(gunzip.made().destroyed).toBe(true);
  });

  it("the request's close after its end is not the client leaving", async () => {
    const req = new PassThrough();
    const reading = readRequestBody(req, 1024, createGunzip);
    req.end(gzipSync(text));
    await new Promise((resolve) => req.once('end', resolve));
    req.destroy();
    expect(await reading).toEqual({ text });
  });
});

describe('readRequestBody of a stream a preParsing hook inflates (INFLATED_UPSTREAM)', () => {
  /** As @fastify/compress makes it: an inflater the request is piped into, counting the wire in `receivedEncodedLength`. */
  function hookStream(): { req: PassThrough; inflated: Transform & { receivedEncodedLength: number } } {
    const req = new PassThrough();
    const inflated = Object.assign(createGunzip(), { receivedEncodedLength: 0 });
    req.on('data', (chunk: Buffer) => (inflated.receivedEncodedLength += chunk.length));
    req.pipe(inflated);
    return { req, inflated };
  }

  it('reads what it hands over, without inflating it again', async () => {
    const { req, inflated } = hookStream();
    const reading: Promise<BodyReading> = readRequestBody(inflated, 1024, INFLATED_UPSTREAM);
    req.end(gzipSync('{"a":1}'));
    expect(await reading).toEqual({ text: '{"a":1}' });
  });

  it('tooLarge past the limit inflated; its stream paused, not destroyed (that would destroy the request piped into it)', async () => {
    const { req, inflated } = hookStream();
    const reading = readRequestBody(inflated, 64 * 1024, INFLATED_UPSTREAM);
    // Still sending: the upload goes on after the refusal.
    req.write(gzipSync(Buffer.alloc(1024 * 1024)));
    expect(await reading).toEqual({ tooLarge: true });
    expect(inflated.isPaused()).toBe(true);
    expect(req.destroyed).toBe(false);
  });

  it('its error is a body that could not be inflated', async () => {
    const { req, inflated } = hookStream();
    const reading = readRequestBody(inflated, 1024, INFLATED_UPSTREAM);
    req.end(Buffer.from('not gzip'));
    expect(await reading).toEqual({ undecodable: true });
  });
});
