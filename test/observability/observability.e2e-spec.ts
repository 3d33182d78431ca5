/**
 * Spans, metrics, events and call logs, with the OpenTelemetry SDK's in-memory
 * exporters, over real HTTP (127.0.0.1:0, fetch).
 */
import { Injectable, Module } from '@nestjs/common';
import { EventEmitter2, EventEmitterModule } from '@nestjs/event-emitter';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import {
  JsonRpcEvent,
  JsonRpcModule,
  MemoryStreamStore,
  RpcMethod,
  RpcNotFoundException,
  RpcParam,
  RpcStream,
  StreamFormat,
  type RpcContext,
} from '@nest-jsonrpc/server';
import { JsonRpcClient } from '@nest-jsonrpc/client';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';
import { EventRecorder } from './event-recorder.js';
import { installTestSdk, pointsOf, until, type TestSdk } from './otel-test-sdk.js';

/** Sent as a params value on every call; must never show up in a span, metric, event or log. */
const SECRET = 'SECRET-PARAM-VALUE-4711';

@Injectable()
class ObservedMethods {
  @RpcMethod('obs.echo')
  echo(@RpcParam('secret') secret: string) {
    // A span the handler opens is a child of the call's span.
    trace.getTracer('app').startActiveSpan('inner', (span) => span.end());
    return { length: secret.length };
  }

  @RpcMethod('obs.missing')
  missing(@RpcParam('secret') _secret: string) {
    throw new RpcNotFoundException('no such thing');
  }

  @RpcMethod('obs.crash')
  async crash(@RpcParam('secret') _secret: string) {
    await Promise.resolve();
    throw new Error('boom in the handler');
  }

  @RpcMethod('obs.rows')
  @RpcStream({ format: StreamFormat.Ndjson })
  async *rows(@RpcParam('secret') _secret: string, @RpcParam('n') n: number) {
    for (let i = 0; i < n; i++) {
      // The generator runs inside its call's span.
      if (i === 0) trace.getTracer('app').startActiveSpan('row-work', (span) => span.end());
      yield { i };
    }
  }

  @RpcMethod('obs.badRows')
  @RpcStream({ format: StreamFormat.Ndjson })
  async *badRows(@RpcParam('secret') _secret: string) {
    yield { i: 0 };
    throw new RpcNotFoundException('gone mid-stream');
  }

  @RpcMethod('obs.report')
  @RpcStream({ durable: true })
  async *report(@RpcParam('secret') _secret: string, ctx: RpcContext) {
    void ctx;
    for (let i = 0; i < 3; i++) {
      // A durable producer runs inside its run's span.
      if (i === 0) trace.getTracer('app').startActiveSpan('report-work', (span) => span.end());
      yield { part: i };
    }
  }
}

@Module({
  imports: [
    EventEmitterModule.forRoot(),
    JsonRpcModule.forRoot({ stream: { enabled: true }, durable: { enabled: true, store: new MemoryStreamStore() } }),
  ],
  providers: [ObservedMethods, EventRecorder],
})
class ObservedApp {}

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';

describe('observability', () => {
  let sdk: TestSdk;
  let t: TestApp;
  let recorder: EventRecorder;

  beforeAll(async () => {
    sdk = installTestSdk();
    t = await startTestApp(ObservedApp);
    recorder = t.app.get(EventRecorder);
  });

  afterAll(async () => {
    await t.close();
    await sdk.uninstall();
  });

  beforeEach(() => {
    sdk.exporter.reset();
    recorder.events.length = 0;
  });

  const callSpans = (method: string) => sdk.spans().filter((s) => s.name === method);
  const only = (method: string): ReadableSpan => {
    const spans = callSpans(method);
    expect(spans).toHaveLength(1);
    return spans[0];
  };
  const parentId = (span: ReadableSpan) => span.parentSpanContext?.spanId;

  it('a successful call: one SERVER span named by the method, the conventional attributes, active in the handler', async () => {
    const { body } = await t.rpc({ jsonrpc: '2.0', id: 7, method: 'obs.echo', params: { secret: SECRET } });
    expect(body.result).toEqual({ length: SECRET.length });
    await until(() => callSpans('obs.echo').length === 1);
    const span = only('obs.echo');
    expect(span.kind).toBe(SpanKind.SERVER);
    expect(span.attributes).toEqual({
      'rpc.system.name': 'jsonrpc',
      'rpc.method': 'obs.echo',
      'jsonrpc.protocol.version': '2.0',
      'jsonrpc.request.id': '7',
    });
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
    const inner = only('inner');
    expect(parentId(inner)).toBe(span.spanContext().spanId);
    // Nothing instrumented the HTTP request and it carried one call: that call's span is the request's (a root here).
    expect(span.parentSpanContext).toBeUndefined();
    expect(sdk.spans().filter((s) => s.name === 'POST /rpc')).toHaveLength(0);
  });

  it('an error: rpc.status_code (a string), error.type, status ERROR; -32603 logged once, with its stack', async () => {
    t.logger.lines.length = 0;
    const missing = await t.rpc({ jsonrpc: '2.0', id: 1, method: 'obs.missing', params: { secret: SECRET } });
    expect(missing.body.error.code).toBe(-32002);
    const crash = await t.rpc({ jsonrpc: '2.0', id: 2, method: 'obs.crash', params: { secret: SECRET } });
    expect(crash.body.error).toEqual({ code: -32603, message: 'Internal error' });
    const span = only('obs.missing');
    expect(span.attributes).toEqual({
      'rpc.system.name': 'jsonrpc',
      'rpc.method': 'obs.missing',
      'jsonrpc.protocol.version': '2.0',
      'jsonrpc.request.id': '1',
      'rpc.status_code': '-32002',
      'error.type': '-32002',
    });
    expect(span.status.code).toBe(SpanStatusCode.ERROR);
    expect(only('obs.crash').attributes['rpc.status_code']).toBe('-32603');
    // One line per failed call: -32603 is the mapper's line with the cause's stack, as before (not a second one).
    const crashLines = t.logger.lines.filter((l) => l.message.includes('obs.crash'));
    expect(crashLines).toHaveLength(1);
    expect(crashLines[0].level).toBe('error');
    expect(crashLines[0].message).toBe('Unhandled error in obs.crash: boom in the handler');
    expect(String(crashLines[0].extra[0])).toContain('at ObservedMethods.crash');
    const missingLines = t.logger.lines.filter((l) => l.message.includes('obs.missing'));
    expect(missingLines.map((l) => l.level)).toEqual(['log']);
    expect(missingLines[0].message).toMatch(/^call failed method=obs\.missing id=1 transport=http requestId=\S+ code=-32002 durationMs=[\d.]+$/);
  });

  it('a notification has no jsonrpc.request.id; a failing notification records its error and its event', async () => {
    const ok = await t.post({ jsonrpc: '2.0', method: 'obs.echo', params: { secret: SECRET } });
    expect(ok.status).toBe(204);
    const failing = await t.post({ jsonrpc: '2.0', method: 'obs.crash', params: { secret: SECRET } });
    expect(failing.status).toBe(204);
    await until(() => callSpans('obs.crash').length === 1);
    expect(only('obs.echo').attributes).toEqual({ 'rpc.system.name': 'jsonrpc', 'rpc.method': 'obs.echo', 'jsonrpc.protocol.version': '2.0' });
    const crash = only('obs.crash');
    expect(crash.attributes['jsonrpc.request.id']).toBeUndefined();
    expect(crash.status.code).toBe(SpanStatusCode.ERROR);
    const failed = recorder.named(JsonRpcEvent.CallFailed);
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ method: 'obs.crash', code: -32603, isNotification: true, id: undefined, transport: 'http' });
    expect(failed[0].cause).toBeInstanceOf(Error);
    expect(recorder.named(JsonRpcEvent.CallSucceeded)).toHaveLength(1);
  });

  it('a batch: one span per item, siblings under one request span, one trace', async () => {
    const { body } = await t.rpc([
      { jsonrpc: '2.0', id: 1, method: 'obs.echo', params: { secret: SECRET } },
      { jsonrpc: '2.0', id: 2, method: 'obs.missing', params: { secret: SECRET } },
      { jsonrpc: '2.0', method: 'obs.echo', params: { secret: SECRET } },
    ]);
    expect(body).toHaveLength(2);
    await until(() => sdk.spans().some((s) => s.name === 'POST /rpc'));
    const items = sdk.spans().filter((s) => s.name.startsWith('obs.'));
    expect(items).toHaveLength(3);
    const request = sdk.spans().find((s) => s.name === 'POST /rpc')!;
    for (const item of items) {
      expect(item.spanContext().traceId).toBe(request.spanContext().traceId);
      expect(parentId(item)).toBe(request.spanContext().spanId);
    }
    expect(items.map((s) => s.attributes['jsonrpc.request.id']).sort()).toEqual(['1', '2', undefined]);
    expect(request.kind).toBe(SpanKind.SERVER);
    expect(request.attributes).toEqual({ 'http.request.method': 'POST', 'http.route': '/rpc', 'url.path': '/rpc', 'http.response.status_code': 200 });
  });

  it('continues an incoming traceparent; a malformed one starts a new trace; sampled=00 records nothing', async () => {
    await t.rpc({ jsonrpc: '2.0', id: 1, method: 'obs.echo', params: { secret: SECRET } }, { headers: { traceparent: `00-${TRACE_ID}-${PARENT_ID}-01` } });
    await until(() => callSpans('obs.echo').length === 1);
    expect(only('obs.echo').spanContext().traceId).toBe(TRACE_ID);
    expect(parentId(only('obs.echo'))).toBe(PARENT_ID);

    sdk.exporter.reset();
    await t.rpc([{ jsonrpc: '2.0', id: 1, method: 'obs.echo', params: { secret: SECRET } }, { jsonrpc: '2.0', id: 2, method: 'obs.echo', params: { secret: SECRET } }], {
      headers: { traceparent: `00-${TRACE_ID}-${PARENT_ID}-01` },
    });
    await until(() => sdk.spans().some((s) => s.name === 'POST /rpc'));
    const request = sdk.spans().find((s) => s.name === 'POST /rpc')!;
    expect(request.spanContext().traceId).toBe(TRACE_ID);
    expect(parentId(request)).toBe(PARENT_ID);
    expect(callSpans('obs.echo').map((s) => [s.spanContext().traceId, parentId(s)])).toEqual([
      [TRACE_ID, request.spanContext().spanId],
      [TRACE_ID, request.spanContext().spanId],
    ]);

    sdk.exporter.reset();
    await t.rpc({ jsonrpc: '2.0', id: 1, method: 'obs.echo', params: { secret: SECRET } }, { headers: { traceparent: `00-${TRACE_ID}-0000000000000000-01` } });
    await until(() => callSpans('obs.echo').length === 1);
    expect(only('obs.echo').spanContext().traceId).not.toBe(TRACE_ID);

    sdk.exporter.reset();
    await t.rpc({ jsonrpc: '2.0', id: 1, method: 'obs.echo', params: { secret: SECRET } }, { headers: { traceparent: `00-${TRACE_ID}-${PARENT_ID}-00` } });
    await t.rpc({ jsonrpc: '2.0', id: 2, method: 'obs.missing', params: { secret: SECRET } }); // a recorded call, to know the first is done
    await until(() => callSpans('obs.missing').length === 1);
    expect(callSpans('obs.echo')).toHaveLength(0);
  });

  it('the client sends traceparent for its active span: client -> server is one trace', async () => {
    const client = new JsonRpcClient({ url: `${t.url}/rpc` });
    const tracer = trace.getTracer('client-app');
    await tracer.startActiveSpan('client-operation', async (span) => {
      await client.call('obs.echo', { secret: SECRET });
      span.end();
    });
    await until(() => callSpans('obs.echo').length === 1);
    const clientSpan = only('client-operation');
    const server = only('obs.echo');
    expect(server.spanContext().traceId).toBe(clientSpan.spanContext().traceId);
    expect(parentId(server)).toBe(clientSpan.spanContext().spanId);
  });

  it('a stream: its span ends after the last row, with the row count and how it ended; stream events', async () => {
    const res = await t.post({ jsonrpc: '2.0', id: 's', method: 'obs.rows', params: { secret: SECRET, n: 3 } }, { path: '/rpc/stream' });
    expect((await res.text()).trim().split('\n')).toHaveLength(3);
    await until(() => callSpans('obs.rows').length === 1);
    const span = only('obs.rows');
    expect(span.attributes).toMatchObject({ 'rpc.method': 'obs.rows', 'jsonrpc.request.id': 's', 'jsonrpc.stream.rows': 3, 'jsonrpc.stream.ending': 'completed' });
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
    expect(parentId(only('row-work'))).toBe(span.spanContext().spanId);
    await until(() => recorder.named(JsonRpcEvent.StreamFinished).length === 1);
    expect(recorder.named(JsonRpcEvent.StreamStarted)).toEqual([expect.objectContaining({ method: 'obs.rows', transport: 'stream', id: 's' })]);
    expect(recorder.named(JsonRpcEvent.StreamFinished)[0]).toMatchObject({ method: 'obs.rows', rows: 3, ending: 'completed' });

    const bad = await t.post({ jsonrpc: '2.0', id: 'b', method: 'obs.badRows', params: { secret: SECRET } }, { path: '/rpc/stream' });
    expect(await bad.text()).toContain('"code":-32002');
    await until(() => callSpans('obs.badRows').length === 1);
    const badSpan = only('obs.badRows');
    expect(badSpan.attributes).toMatchObject({ 'jsonrpc.stream.rows': 1, 'jsonrpc.stream.ending': 'error', 'rpc.status_code': '-32002', 'error.type': '-32002' });
    expect(badSpan.status.code).toBe(SpanStatusCode.ERROR);
    await until(() => recorder.named(JsonRpcEvent.StreamFinished).length === 2);
    expect(recorder.named(JsonRpcEvent.StreamFinished)[1]).toMatchObject({ method: 'obs.badRows', rows: 1, ending: 'error', code: -32002 });
  });

  it('a stream whose client leaves ends its span as client_gone', async () => {
    const res = await t.post({ jsonrpc: '2.0', id: 'g', method: 'obs.rows', params: { secret: SECRET, n: 1e9 } }, { path: '/rpc/stream' });
    const reader = res.body!.getReader();
    await reader.read();
    await reader.cancel();
    await until(() => callSpans('obs.rows').length === 1);
    expect(only('obs.rows').attributes['jsonrpc.stream.ending']).toBe('client_gone');
  });

  it('a durable run: the starting call ends at the start; the run has its own span, linked to it', async () => {
    const { body } = await t.rpc({ jsonrpc: '2.0', id: 'd', method: 'obs.report', params: { secret: SECRET } });
    const streamId = body.result.stream_id as string;
    await until(() => recorder.named(JsonRpcEvent.DurableFinished).length === 1);
    await until(() => callSpans('obs.report').length === 2);
    const [start, run] = [...callSpans('obs.report')].sort((a, b) => a.kind === SpanKind.SERVER ? -1 : b.kind === SpanKind.SERVER ? 1 : 0);
    expect(start.kind).toBe(SpanKind.SERVER);
    expect(start.attributes).toMatchObject({ 'rpc.method': 'obs.report', 'jsonrpc.request.id': 'd', 'jsonrpc.durable.stream_id': streamId });
    expect(run.kind).toBe(SpanKind.INTERNAL);
    expect(run.spanContext().traceId).not.toBe(start.spanContext().traceId);
    expect(run.links.map((l) => l.context.spanId)).toEqual([start.spanContext().spanId]);
    expect(run.attributes).toMatchObject({ 'jsonrpc.durable.stream_id': streamId, 'jsonrpc.stream.rows': 3, 'jsonrpc.stream.ending': 'completed' });
    expect(parentId(only('report-work'))).toBe(run.spanContext().spanId);
    expect(recorder.named(JsonRpcEvent.DurableStarted)).toEqual([expect.objectContaining({ method: 'obs.report', streamId, transport: 'durable' })]);
    expect(recorder.named(JsonRpcEvent.DurableFinished)[0]).toMatchObject({ method: 'obs.report', streamId, rows: 3, ending: 'completed' });
  });

  it('metrics: rpc.server.call.duration per method and code (seconds), stream and durable counters', async () => {
    await t.rpc({ jsonrpc: '2.0', id: 1, method: 'obs.echo', params: { secret: SECRET } });
    await t.rpc({ jsonrpc: '2.0', id: 2, method: 'obs.missing', params: { secret: SECRET } });
    await t.rpc({ jsonrpc: '2.0', id: 3, method: 'obs.crash', params: { secret: SECRET } });
    const rowsCounted = async (method: string) => pointsOf(await sdk.collect(), 'jsonrpc.server.stream.rows').find((p) => p.attributes['rpc.method'] === method)?.value ?? 0;
    const liveRowsBefore = await rowsCounted('obs.rows');
    // A live stream, and a durable run to its end: this test measures its own calls (any order).
    expect(await (await t.post({ jsonrpc: '2.0', id: 4, method: 'obs.rows', params: { secret: SECRET, n: 2 } }, { path: '/rpc/stream' })).text()).toBe('{"i":0}\n{"i":1}\n');
    const finishedBefore = recorder.named(JsonRpcEvent.DurableFinished).length;
    await t.rpc({ jsonrpc: '2.0', id: 5, method: 'obs.report', params: { secret: SECRET } });
    await until(() => recorder.named(JsonRpcEvent.DurableFinished).length === finishedBefore + 1);
    const collected = await sdk.collect();
    const duration = pointsOf(collected, 'rpc.server.call.duration');
    const echo = duration.find((p) => p.attributes['rpc.method'] === 'obs.echo')!;
    expect(echo.attributes).toEqual({ 'rpc.system.name': 'jsonrpc', 'rpc.method': 'obs.echo' });
    expect(echo.value.count).toBeGreaterThanOrEqual(1);
    expect(echo.value.max).toBeLessThan(5); // seconds
    const missing = duration.filter((p) => p.attributes['rpc.method'] === 'obs.missing');
    expect(missing.map((p) => p.attributes)).toEqual([{ 'rpc.system.name': 'jsonrpc', 'rpc.method': 'obs.missing', 'rpc.status_code': '-32002' }]);
    const crash = duration.filter((p) => p.attributes['rpc.method'] === 'obs.crash');
    expect(crash.map((p) => p.attributes['rpc.status_code'])).toEqual(['-32603']);
    expect(pointsOf(collected, 'jsonrpc.server.stream.rows').find((p) => p.attributes['rpc.method'] === 'obs.report')!.value).toBeGreaterThanOrEqual(3);
    // The live stream's two rows, each counted as the writer takes it.
    expect(await rowsCounted('obs.rows')).toBe(liveRowsBefore + 2);
    expect(pointsOf(collected, 'jsonrpc.server.durable.started')[0].value).toBeGreaterThanOrEqual(1);
    expect(pointsOf(collected, 'jsonrpc.server.durable.finished')[0].attributes['jsonrpc.stream.ending']).toBe('completed');
    const live = pointsOf(collected, 'jsonrpc.server.stream.active').find((p) => p.attributes['rpc.method'] === 'obs.rows');
    expect(live?.value).toBe(0);
  });

  it('events: exactly one per outcome, with method, integer code, durationMs, request id, transport', async () => {
    await t.rpc([
      { jsonrpc: '2.0', id: 1, method: 'obs.echo', params: { secret: SECRET } },
      { jsonrpc: '2.0', id: 2, method: 'obs.missing', params: { secret: SECRET } },
    ]);
    const succeeded = recorder.named(JsonRpcEvent.CallSucceeded);
    const failed = recorder.named(JsonRpcEvent.CallFailed);
    expect(succeeded).toEqual([expect.objectContaining({ method: 'obs.echo', id: 1, transport: 'http', isNotification: false })]);
    expect(typeof succeeded[0].durationMs).toBe('number');
    expect(typeof succeeded[0].requestId).toBe('string');
    expect(failed).toEqual([expect.objectContaining({ method: 'obs.missing', id: 2, code: -32002, transport: 'http' })]);
    expect(failed[0].cause).toBeUndefined();
  });

  it('a failing listener is logged and never changes the call', async () => {
    t.logger.lines.length = 0;
    const emitter = t.app.get(EventEmitter2);
    const explode = () => {
      throw new Error('listener exploded');
    };
    emitter.on(JsonRpcEvent.CallSucceeded, explode);
    try {
      const { body } = await t.rpc({ jsonrpc: '2.0', id: 1, method: 'obs.echo', params: { secret: SECRET } });
      expect(body.result).toEqual({ length: SECRET.length });
    } finally {
      emitter.off(JsonRpcEvent.CallSucceeded, explode);
    }
    expect(t.logger.text('error')).toContain('A listener of jsonrpc.call.succeeded failed: listener exploded');
  });

  it('a params value never shows up in a span, a metric, an event or a log line', async () => {
    await t.rpc([
      { jsonrpc: '2.0', id: 1, method: 'obs.echo', params: { secret: SECRET } },
      { jsonrpc: '2.0', id: 2, method: 'obs.crash', params: { secret: SECRET } },
      { jsonrpc: '2.0', method: 'obs.missing', params: { secret: SECRET } },
    ]);
    await (await t.post({ jsonrpc: '2.0', id: 3, method: 'obs.rows', params: { secret: SECRET, n: 2 } }, { path: '/rpc/stream' })).text();
    await t.rpc({ jsonrpc: '2.0', id: 4, method: 'obs.report', params: { secret: SECRET } });
    await until(() => recorder.named(JsonRpcEvent.DurableFinished).length === 1);
    const spans = sdk.spans().map((s) => ({ name: s.name, attributes: s.attributes, events: s.events, links: s.links, status: s.status }));
    expect(spans.length).toBeGreaterThan(5);
    const everything = JSON.stringify({
      spans,
      metrics: await sdk.collect(),
      events: recorder.events.map((e) => ({ ...e, payload: { ...e.payload, cause: String(e.payload.cause) } })),
      logs: t.logger.lines,
    });
    expect(everything).not.toContain(SECRET);
  });
});
