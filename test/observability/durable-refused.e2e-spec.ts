/**
 * A durable start refused for `durable.maxRunning` after its handler ran is observed as what
 * the caller gets: a failed call (-32003) — not a success, and no durable run.
 */
import { Injectable, Module } from '@nestjs/common';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { SpanStatusCode } from '@opentelemetry/api';
import { JsonRpcEvent, JsonRpcModule, MemoryStreamStore, RpcMethod, RpcStream, type RpcContext } from '@nest-jsonrpc/server';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';
import { EventRecorder } from './event-recorder.js';
import { installTestSdk, pointsOf, until, type TestSdk } from './otel-test-sdk.js';

/** One durable slot in all (`maxRunning.total: 1`): `cap.hold` keeps it until cancelled. */
@Injectable()
class CappedMethods {
  static produced = 0;

  @RpcMethod('cap.hold')
  @RpcStream({ durable: true })
  async *hold(_params: unknown, ctx: RpcContext) {
    yield { held: true };
    await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
  }

  @RpcMethod('cap.report')
  @RpcStream({ durable: true })
  async *report() {
    CappedMethods.produced++;
    yield { part: 0 };
  }
}

@Module({
  imports: [EventEmitterModule.forRoot(), JsonRpcModule.forRoot({ durable: { enabled: true, store: new MemoryStreamStore(), maxRunning: { total: 1 } } })],
  providers: [CappedMethods, EventRecorder],
})
class CappedApp {}

describe('observability of a refused durable start', () => {
  let sdk: TestSdk;
  let t: TestApp;

  beforeAll(async () => {
    sdk = installTestSdk();
    t = await startTestApp(CappedApp);
  });
  afterAll(async () => {
    await t.close();
    await sdk.uninstall();
  });

  it('is a failed call (-32003): span status ERROR, call.failed, duration by code, no durable.started, producer never pulled', async () => {
    const recorder = t.app.get(EventRecorder);
    const held = await t.rpc({ jsonrpc: '2.0', id: 'h', method: 'cap.hold' });
    const holdId = held.body.result.stream_id as string;
    await until(() => recorder.named(JsonRpcEvent.DurableStarted).length === 1);
    sdk.exporter.reset();
    recorder.events.length = 0;

    const refused = await t.rpc({ jsonrpc: '2.0', id: 'r', method: 'cap.report' });
    expect(refused.body).toEqual({
      jsonrpc: '2.0',
      error: { code: -32003, message: 'Too many running durable streams: the limit is 1', data: { limit: 1 } },
      id: 'r',
    });
    await until(() => sdk.spans().some((s) => s.name === 'cap.report'));
    const spans = sdk.spans().filter((s) => s.name === 'cap.report');
    expect(spans).toHaveLength(1);
    expect(spans[0].status.code).toBe(SpanStatusCode.ERROR);
    expect(spans[0].attributes['rpc.status_code']).toBe('-32003');
    expect(recorder.named(JsonRpcEvent.CallFailed)).toEqual([expect.objectContaining({ method: 'cap.report', code: -32003 })]);
    expect(recorder.named(JsonRpcEvent.CallSucceeded)).toEqual([]);
    expect(recorder.named(JsonRpcEvent.DurableStarted)).toEqual([]);
    const duration = pointsOf(await sdk.collect(), 'rpc.server.call.duration').filter((p) => p.attributes['rpc.method'] === 'cap.report');
    expect(duration.map((p) => p.attributes['rpc.status_code'])).toEqual(['-32003']);
    expect(CappedMethods.produced).toBe(0);
    expect(t.logger.text('error')).toBe('');

    // Once the slot is free, the same call starts and is a success.
    expect((await fetch(`${t.url}/rpc/streams/${holdId}`, { method: 'DELETE' })).status).toBe(200);
    const started = await t.rpc({ jsonrpc: '2.0', id: 's', method: 'cap.report' });
    expect(started.body.result.status).toBe('running');
    await until(() => recorder.named(JsonRpcEvent.DurableStarted).length === 1);
    expect(recorder.named(JsonRpcEvent.CallSucceeded)).toEqual([expect.objectContaining({ method: 'cap.report' })]);
  });
});
