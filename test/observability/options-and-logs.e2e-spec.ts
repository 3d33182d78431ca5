/**
 * `observability` options: checked at startup; `logCalls` 'all' | 'errors' | 'none';
 * no event emitter and no SDK registered: calls are answered as before.
 */
import { Injectable, Module, type INestApplication } from '@nestjs/common';
import {
  JsonRpcModule,
  MemoryStreamStore,
  RpcInternalErrorException,
  RpcMethod,
  RpcNotFoundException,
  RpcStream,
  StreamFormat,
  type JsonRpcModuleOptions,
} from '@nest-jsonrpc/server';
import { NestFactory } from '@nestjs/core';
import { startTestApp, testAdapter } from '../support/rpc-test-app.js';
import { installTestSdk, pointsOf, until } from './otel-test-sdk.js';

@Injectable()
class Methods {
  @RpcMethod('ok')
  ok() {
    return 1;
  }

  @RpcMethod('refused')
  refused() {
    throw new RpcNotFoundException();
  }

  @RpcMethod('crash')
  crash() {
    throw new Error('kaboom');
  }
}

/** One failure per transport, each with a text of its own to count its log lines by. */
@Injectable()
class FailingMethods {
  @RpcMethod('once.crash')
  crash() {
    throw new Error('crash-cause');
  }

  @RpcMethod('once.chosen')
  chosen() {
    throw new RpcInternalErrorException('chosen-failure');
  }

  @RpcMethod('once.rows')
  @RpcStream({ format: StreamFormat.Ndjson })
  async *rows() {
    yield { i: 0 };
    throw new Error('rows-cause');
  }

  @RpcMethod('once.durable')
  @RpcStream({ durable: true })
  async *durable() {
    yield { i: 0 };
    throw new Error('producer-cause');
  }
}

async function appWith(observability: JsonRpcModuleOptions['observability']) {
  @Module({ imports: [JsonRpcModule.forRoot({ observability })], providers: [Methods] })
  class App {}
  return startTestApp(App);
}

async function run(observability: JsonRpcModuleOptions['observability']) {
  const t = await appWith(observability);
  try {
    const { body } = await t.rpc([
      { jsonrpc: '2.0', id: 1, method: 'ok' },
      { jsonrpc: '2.0', id: 2, method: 'refused' },
      { jsonrpc: '2.0', id: 3, method: 'crash' },
    ]);
    expect(body.map((a: any) => a.result ?? a.error.code)).toEqual([1, -32002, -32603]);
    return t.logger.lines.filter((l) => /ok|refused|crash|kaboom/.test(l.message));
  } finally {
    await t.close();
  }
}

describe('observability options and call logs', () => {
  it("'errors' (default): one line per failed call; -32603 is the mapper's line with its stack, as before", async () => {
    const lines = await run(undefined);
    expect(lines.map((l) => [l.level, l.message.replace(/requestId=\S+ /, '').replace(/durationMs=[\d.]+/, 'durationMs=N')])).toEqual([
      ['log', 'call failed method=refused id=2 transport=http code=-32002 durationMs=N'],
      ['error', 'Unhandled error in crash: kaboom'],
    ]);
    expect(String(lines[1].extra[0])).toMatch(/^Error: kaboom\n\s+at /);
  });

  it("'all': also one line per successful call (an access log)", async () => {
    const lines = await run({ logCalls: 'all' });
    expect(lines.map((l) => l.message.split(' requestId')[0])).toEqual([
      'call succeeded method=ok id=1 transport=http',
      'call failed method=refused id=2 transport=http',
      'Unhandled error in crash: kaboom',
    ]);
  });

  it("'none': no call lines; a -32603's cause is still logged (never lost)", async () => {
    const lines = await run({ logCalls: 'none', tracing: false, metrics: false, events: false });
    expect(lines.map((l) => l.message)).toEqual(['Unhandled error in crash: kaboom']);
  });

  it('bad values fail startup, listed with the other problems', async () => {
    @Module({ imports: [JsonRpcModule.forRoot({ observability: { tracing: 'yes', logCalls: 'some', colour: true } as never })] })
    class BadApp {}
    const started = NestFactory.create<INestApplication>(BadApp, testAdapter(), { logger: false, abortOnError: false });
    await expect(started).rejects.toThrow(
      /unknown option "observability\.colour"[\s\S]*"observability\.tracing" must be a boolean[\s\S]*"observability\.logCalls" must be "errors", "all" or "none", got "some"/,
    );
  });

  it('no SDK at the first calls: nothing recorded, nothing broken; an SDK registered later is used from the next call', async () => {
    const t = await appWith(undefined);
    try {
      expect((await t.rpc({ jsonrpc: '2.0', id: 1, method: 'ok' })).body.result).toBe(1);
      const sdk = installTestSdk();
      try {
        expect((await t.rpc({ jsonrpc: '2.0', id: 2, method: 'ok' })).body.result).toBe(1);
        await until(() => sdk.spans().length === 1);
        expect(sdk.spans()[0].attributes['jsonrpc.request.id']).toBe('2');
        const points = pointsOf(await sdk.collect(), 'rpc.server.call.duration');
        expect(points.map((p) => [p.attributes['rpc.method'], p.value.count])).toEqual([['ok', 1]]);
      } finally {
        await sdk.uninstall();
      }
    } finally {
      await t.close();
    }
  });
});

describe('a failed call is logged exactly once, whatever its transport', () => {
  it('a notification, a chosen -32603, a live stream and a durable producer: one line each', async () => {
    @Module({
      imports: [JsonRpcModule.forRoot({ stream: { enabled: true }, durable: { enabled: true, store: new MemoryStreamStore() } })],
      providers: [FailingMethods],
    })
    class App {}
    const t = await startTestApp(App);
    const linesOf = (text: string) => t.logger.lines.filter((l) => l.message.includes(text) || l.extra.some((e) => String(e).includes(text)));
    try {
      expect((await t.post({ jsonrpc: '2.0', method: 'once.crash' })).status).toBe(204);
      expect((await t.rpc({ jsonrpc: '2.0', id: 1, method: 'once.chosen' })).body.error).toEqual({ code: -32603, message: 'chosen-failure' });
      const stream = await t.post({ jsonrpc: '2.0', id: 2, method: 'once.rows' }, { path: '/rpc/stream' });
      expect(await stream.text()).toContain('"code":-32603');
      const { body } = await t.rpc({ jsonrpc: '2.0', id: 3, method: 'once.durable' });
      expect(typeof body.result.stream_id).toBe('string');
      await until(() => linesOf('producer-cause').length > 0);
      // One more answered call after the last failure: any second line of an earlier one is out by now.
      expect((await t.rpc({ jsonrpc: '2.0', id: 4, method: 'once.chosen' })).body.error.code).toBe(-32603);

      expect(linesOf('crash-cause').map((l) => [l.level, l.message])).toEqual([['error', 'Unhandled error in once.crash: crash-cause']]);
      expect(linesOf('rows-cause').map((l) => [l.level, l.message])).toEqual([['error', 'Unhandled error in once.rows: rows-cause']]);
      expect(linesOf('producer-cause').map((l) => [l.level, l.message])).toEqual([['error', 'Unhandled error in once.durable: producer-cause']]);
      // No call line beside them: the line with the cause is the call's.
      expect([...linesOf('method=once.crash'), ...linesOf('method=once.rows'), ...linesOf('method=once.durable')]).toEqual([]);
      // An RpcException the app chose has no cause to log: the call line reports it (one per call).
      expect(linesOf('method=once.chosen').map((l) => [l.level, l.message.replace(/requestId=\S+ /, '').replace(/durationMs=[\d.]+/, 'durationMs=N')])).toEqual([
        ['log', 'call failed method=once.chosen id=1 transport=http code=-32603 durationMs=N'],
        ['log', 'call failed method=once.chosen id=4 transport=http code=-32603 durationMs=N'],
      ]);
    } finally {
      await t.close();
    }
  });
});
