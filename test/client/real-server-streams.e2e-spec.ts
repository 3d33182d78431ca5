/**
 * The client's stream contract (stream-client.contract.ts) run against the real server: the
 * module's `/rpc/stream` route in all three formats, in-band errors, leaving clients and chunked
 * results reassembled by the client.
 */
import { Injectable, Module } from '@nestjs/common';
import { JsonRpcModule, RpcException, RpcMethod, RpcStream, StreamFormat, resultChunks, type RpcContext } from '@nest-jsonrpc/server';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';
import { describeStreamClient, type StreamTarget, type WireFormat } from './stream-client.contract.js';

const FORMAT: Record<WireFormat, StreamFormat> = { ndjson: StreamFormat.Ndjson, sse: StreamFormat.Sse, json: StreamFormat.JsonArray };
const left: string[] = [];

async function* rows(count: number) {
  for (let i = 0; i < count; i++) yield { i };
}

async function* failing(after: number) {
  yield* rows(after);
  throw new RpcException('Row gone', { code: -32002, data: { after } });
}

async function* endless(method: string, ctx: RpcContext) {
  try {
    for (let i = 0; !ctx.signal.aborted; i++) {
      yield { i };
      await new Promise((r) => setTimeout(r, 5));
    }
  } finally {
    left.push(method);
  }
}

/** One class per format, since a method's format is fixed by its decorator. */
function streamMethods(format: WireFormat) {
  @Injectable()
  class Methods {
    @RpcMethod(`real.rows.${format}`)
    @RpcStream({ format: FORMAT[format] })
    rows(p: { count: number }) {
      return rows(p.count);
    }

    @RpcMethod(`real.fail.${format}`)
    @RpcStream({ format: FORMAT[format] })
    fail(p: { after: number }) {
      return failing(p.after);
    }

    @RpcMethod(`real.endless.${format}`)
    @RpcStream({ format: FORMAT[format] })
    endless(_p: unknown, ctx: RpcContext) {
      return endless(`real.endless.${format}`, ctx);
    }
  }
  return Methods;
}

@Injectable()
class ChunkMethods {
  @RpcMethod('real.chunks')
  @RpcStream()
  async *chunks(p: { text: string; size: number }) {
    yield* resultChunks('r1', new TextEncoder().encode(p.text), { encoding: 'base64', chunkSize: p.size });
    yield { done: true };
  }
}

@Module({
  imports: [JsonRpcModule.forRoot({ stream: { enabled: true } })],
  providers: [streamMethods('ndjson'), streamMethods('sse'), streamMethods('json'), ChunkMethods],
})
class RealStreamsModule {}

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp(RealStreamsModule);
});
afterAll(() => app.close());

const target: StreamTarget = {
  rpcUrl: () => `${app.url}/rpc`,
  rowsMethod: (f) => `real.rows.${f}`,
  failMethod: (f) => `real.fail.${f}`,
  endlessMethod: (f) => `real.endless.${f}`,
  chunksMethod: 'real.chunks',
  async waitForClientLeft(method) {
    const deadline = Date.now() + 2000;
    while (!left.includes(method)) {
      if (Date.now() > deadline) throw new Error(`the server never saw the ${method} client leave`);
      await new Promise((r) => setTimeout(r, 5));
    }
    left.splice(left.indexOf(method), 1);
  },
};

describeStreamClient('real server', () => target, { chunks: true, durable: false });
