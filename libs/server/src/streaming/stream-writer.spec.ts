import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { ndjsonEncoder, sseEncoder, type RpcErrorObject } from '@nest-jsonrpc/protocol';
import type { RowIterator } from '../pipeline/stream-source.js';
import { COALESCE_LIMIT, ErrorFrameRow, EventRow, StreamResponseWriter, type StreamWriterConfig } from './stream-writer.js';

/** A ServerResponse stand-in whose socket is "full" until the test drains it. */
class FakeResponse extends EventEmitter {
  readonly chunks: string[] = [];
  full = false;
  destroyed = false;
  writableEnded = false;
  ended: string | undefined;
  flushed = 0;
  write(chunk: string): boolean {
    this.chunks.push(chunk);
    return !this.full;
  }
  end(chunk: string): void {
    this.ended = chunk;
    this.writableEnded = true;
  }
  flushHeaders(): void {
    this.flushed++;
  }
  drain(): void {
    this.full = false;
    this.emit('drain');
  }
  asResponse(): ServerResponse {
    return this as unknown as ServerResponse;
  }
}

/** A producer that counts pulls and stops when told. */
class CountingRows implements RowIterator {
  pulled = 0;
  returned = 0;
  constructor(private readonly limit = Infinity) {}
  next(): IteratorResult<unknown> {
    if (this.pulled >= this.limit) return { value: undefined, done: true };
    return { value: { i: this.pulled++ }, done: false };
  }
  return(): IteratorResult<unknown> {
    this.returned++;
    return { value: undefined, done: true };
  }
}

const toErrorObject = (error: unknown): RpcErrorObject => ({ code: -32603, message: error instanceof Error ? error.message : 'Internal error' });
const config = (encoder = ndjsonEncoder): StreamWriterConfig => ({
  encoder,
  stalledWriteMs: 0,
  toErrorObject,
  errorFrame: (encode, error) => {
    try {
      return encode(error);
    } catch (failure) {
      return encode(toErrorObject(failure));
    }
  },
  reportCleanupError: () => undefined,
});

const turn = () => new Promise((resolve) => setImmediate(resolve));

function writer(res: FakeResponse, rows: RowIterator, encoder = ndjsonEncoder) {
  const aborts: unknown[] = [];
  const w = new StreamResponseWriter(res.asResponse(), rows, { abort: (reason) => aborts.push(reason) }, 'm', config(encoder));
  return { w, aborts };
}

describe('StreamResponseWriter', () => {
  it('coalesces the rows of one turn into one write, and ends with the format\'s epilogue', async () => {
    const res = new FakeResponse();
    const rows = new CountingRows(3);
    const { w } = writer(res, rows);
    w.start();
    await w.finished;
    // Headers flushed first; three synchronous rows in one chunk, handed to end().
    expect(res.flushed).toBe(1);
    expect(res.chunks).toEqual([]);
    expect(res.ended).toBe('{"i":0}\n{"i":1}\n{"i":2}\n');
    expect(rows.returned).toBe(0);
  });

  it('backpressure: once a write returns false, the producer is not pulled again until drain', async () => {
    const res = new FakeResponse();
    res.full = true;
    const rows = new CountingRows();
    const { w } = writer(res, rows);
    w.start();
    await turn();
    await turn();
    // The pull loop yields at COALESCE_LIMIT: one chunk was written (refused by the socket), then it waits.
    const pulledWhileFull = rows.pulled;
    expect(res.chunks).toHaveLength(1);
    expect(res.chunks[0].length).toBeGreaterThanOrEqual(COALESCE_LIMIT);
    for (let i = 0; i < 5; i++) await turn();
    expect(rows.pulled).toBe(pulledWhileFull);
    res.drain();
    await turn();
    await turn();
    expect(rows.pulled).toBeGreaterThan(pulledWhileFull);
    res.emit('close');
    await w.finished;
  });

  it('the client leaving aborts the call, stops the producer (return()) and writes nothing more', async () => {
    const res = new FakeResponse();
    res.full = true;
    const rows = new CountingRows();
    const { w, aborts } = writer(res, rows);
    w.start();
    await turn();
    const writes = res.chunks.length;
    res.destroyed = true;
    res.emit('close');
    await w.finished;
    expect(aborts).toHaveLength(1);
    expect(rows.returned).toBe(1);
    res.drain();
    await turn();
    expect(res.chunks).toHaveLength(writes);
    expect(res.ended).toBeUndefined();
  });

  it('a producer that throws ends the stream with an in-band error frame after the rows written', async () => {
    const res = new FakeResponse();
    let n = 0;
    const rows: RowIterator = {
      next: () => {
        if (n++ < 2) return { value: n, done: false };
        throw new Error('boom');
      },
    };
    const { w } = writer(res, rows);
    w.start();
    await w.finished;
    expect(res.ended).toBe('1\n2\n{"error":{"code":-32603,"message":"boom"}}\n');
  });

  it('EventRow keeps SSE ids and event names; ErrorFrameRow ends with the stored error as the format\'s frame', async () => {
    const res = new FakeResponse();
    const values = [new EventRow('{"a":1}', { id: 1, event: 'chunk' }), new ErrorFrameRow('{"code":7,"message":"x"}'), new EventRow('{"never":1}')];
    const rows: RowIterator = { next: () => (values.length ? { value: values.shift(), done: false } : { value: undefined, done: true }), return: () => ({ value: undefined, done: true }) };
    const { w } = writer(res, rows, sseEncoder);
    w.start();
    await w.finished;
    expect(res.ended).toBe('id: 1\nevent: chunk\ndata: {"a":1}\n\nevent: error\ndata: {"error":{"code":7,"message":"x"}}\n\nevent: end\ndata: {}\n\n');
    expect(values).toHaveLength(1);
  });

  it('terminate() (server shutdown) ends an open stream with the given error frame and stops the producer', async () => {
    const res = new FakeResponse();
    res.full = true;
    const rows = new CountingRows();
    const { w, aborts } = writer(res, rows);
    w.start();
    await turn();
    w.terminate({ code: -32000, message: 'Server shutting down' });
    await w.finished;
    expect(res.ended?.endsWith('{"error":{"code":-32000,"message":"Server shutting down"}}\n')).toBe(true);
    expect(rows.returned).toBe(1);
    expect(aborts).toHaveLength(1);
  });
});
