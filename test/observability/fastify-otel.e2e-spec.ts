/**
 * Observability with the real `@fastify/otel` (the instrumentation the README points Fastify users
 * to): a call's span joins the request's trace under the instrumentation's spans, batch items
 * are siblings, and the module opens no HTTP span of its own (`@fastify/otel` has one).
 */
import { Injectable, Module } from '@nestjs/common';
import { propagation, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { FastifyOtelInstrumentation } from '@fastify/otel';
import { JsonRpcModule, MemoryStreamStore, RpcMethod, RpcParam, RpcStream, StreamFormat, type RpcContext } from '@nest-jsonrpc/server';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';
import { installTestSdk, until, type TestSdk } from './otel-test-sdk.js';

@Injectable()
class Methods {
  @RpcMethod('add')
  add(@RpcParam('a') a: number, @RpcParam('b') b: number) {
    return a + b;
  }

  @RpcMethod('count')
  @RpcStream({ format: StreamFormat.Ndjson })
  async *count(@RpcParam('n') n: number) {
    for (let i = 1; i <= n; i++) yield { i };
  }

  /** One row, then nothing until the client leaves (its signal aborts) or the test opens `held`. */
  @RpcMethod('held')
  @RpcStream({ format: StreamFormat.Sse })
  async *held(_params: unknown, ctx: RpcContext) {
    yield { i: 1 };
    await new Promise<void>((resolve) => {
      release.push(resolve);
      ctx.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    if (!ctx.signal.aborted) yield { i: 2 };
  }

  /** A durable stream of one row, then held as `held` is (its producer is not the attached client). */
  @RpcMethod('heldDurable')
  @RpcStream({ durable: true })
  async *heldDurable(_params: unknown, ctx: RpcContext) {
    yield { i: 1 };
    await new Promise<void>((resolve) => {
      release.push(resolve);
      ctx.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    yield { i: 2 };
  }
}

/** Lets every held stream go on to its end. */
const release: Array<() => void> = [];
const releaseAll = () => {
  for (const resolve of release.splice(0)) resolve();
};

@Module({ imports: [JsonRpcModule.forRoot({ stream: { enabled: true }, durable: { enabled: true, store: new MemoryStreamStore() } })], providers: [Methods] })
class App {}

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';

describe('span parents under @fastify/otel', () => {
  let sdk: TestSdk;
  let t: TestApp;

  beforeAll(async () => {
    sdk = installTestSdk();
    // What NodeSDK registers by default; @fastify/otel extracts the incoming trace with it.
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    const instrumentation = new FastifyOtelInstrumentation();
    t = await startTestApp(
      App,
      async (app) => {
        // Before listen: the module mounts its routes at init, so the plugin sees them defined.
        await (app as NestFastifyApplication).register(instrumentation.plugin() as never);
      },
      'fastify',
    );
  });

  afterAll(async () => {
    releaseAll();
    await t.close();
    await sdk.uninstall();
  });

  beforeEach(() => sdk.exporter.reset());

  /** The chain of span names from `span` up to its trace's root, within what was exported. */
  const ancestry = (span: ReadableSpan): string[] => {
    const byId = new Map(sdk.spans().map((s) => [s.spanContext().spanId, s]));
    const names: string[] = [];
    for (let at = byId.get(span.parentSpanContext?.spanId ?? ''); at; at = byId.get(at.parentSpanContext?.spanId ?? '')) names.push(at.name);
    return names;
  };

  it("a call's span is in the request's trace, under @fastify/otel's request span, parented by the incoming traceparent", async () => {
    const { body } = await t.rpc({ jsonrpc: '2.0', id: 1, method: 'add', params: { a: 2, b: 3 } }, { headers: { traceparent: `00-${TRACE_ID}-b7ad6b7169203331-01` } });
    expect(body).toEqual({ jsonrpc: '2.0', result: 5, id: 1 });
    await until(() => sdk.spans().some((s) => s.name === 'request'));
    const call = sdk.spans().find((s) => s.name === 'add')!;
    const request = sdk.spans().find((s) => s.name === 'request')!;
    expect(call.kind).toBe(SpanKind.SERVER);
    expect(request.spanContext().traceId).toBe(TRACE_ID);
    expect(call.spanContext().traceId).toBe(TRACE_ID);
    // @fastify/otel's handler span, then its request span (the root of what this process exported).
    expect(ancestry(call)).toEqual([expect.stringMatching(/^handler - /), 'request']);
    // No HTTP span from the module: @fastify/otel's is the only one.
    expect(sdk.spans().filter((s) => s.name.startsWith('POST'))).toEqual([]);
  });

  it('batch items are siblings under the same parent, in the request trace', async () => {
    await t.rpc([
      { jsonrpc: '2.0', id: 1, method: 'add', params: { a: 1, b: 1 } },
      { jsonrpc: '2.0', id: 2, method: 'add', params: { a: 2, b: 2 } },
    ]);
    await until(() => sdk.spans().some((s) => s.name === 'request'));
    const request = sdk.spans().find((s) => s.name === 'request')!;
    const calls = sdk.spans().filter((s) => s.name === 'add');
    expect(calls).toHaveLength(2);
    expect(calls[0].parentSpanContext?.spanId).toBeDefined();
    expect(calls[1].parentSpanContext?.spanId).toBe(calls[0].parentSpanContext?.spanId);
    for (const call of calls) {
      expect(call.spanContext().traceId).toBe(request.spanContext().traceId);
      expect(ancestry(call).at(-1)).toBe('request');
    }
    expect(sdk.spans().filter((s) => s.name.startsWith('POST'))).toEqual([]);
  });

  it('a live stream: its span lasts to the last row and is in the request trace', async () => {
    const res = await t.post({ jsonrpc: '2.0', id: 's', method: 'count', params: { n: 3 } }, { path: '/rpc/stream' });
    expect(await res.text()).toBe('{"i":1}\n{"i":2}\n{"i":3}\n');
    await until(() => sdk.spans().some((s) => s.name === 'count') && sdk.spans().some((s) => s.name === 'request'));
    const stream = sdk.spans().find((s) => s.name === 'count')!;
    const request = sdk.spans().find((s) => s.name === 'request')!;
    expect(stream.spanContext().traceId).toBe(request.spanContext().traceId);
    expect(stream.attributes).toMatchObject({ 'jsonrpc.stream.rows': 3, 'jsonrpc.stream.ending': 'completed' });
    expect(ancestry(stream).at(-1)).toBe('request');
  });

  describe('the request span of a streamed answer (written on the hijacked reply)', () => {
    // A durable producer outlives its attached client: none is left held for the next test.
    afterEach(releaseAll);

    /** The request span of the request to `path` (url.path, query string included), once exported. */
    const requestSpanOf = async (path: string): Promise<ReadableSpan> => {
      const find = () => sdk.spans().find((s) => s.name === 'request' && s.attributes['url.path'] === path);
      await until(() => find() !== undefined).catch(() => {
        throw new Error(`no request span for ${path} was exported; exported: ${sdk.spans().map((s) => `${s.name} ${String(s.attributes['url.path'] ?? '')}`).join(', ')}`);
      });
      return find()!;
    };

    /** Opens `url`, reads until its first row, and leaves (aborts the fetch). */
    const readFirstRowAndLeave = async (url: string, init: RequestInit = {}) => {
      const leave = new AbortController();
      const res = await fetch(url, { ...init, signal: leave.signal });
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      let text = '';
      while (!text.includes('"i":1')) text += new TextDecoder().decode((await reader.read()).value);
      leave.abort();
      await reader.closed.catch(() => undefined);
    };

    const post = (method: string) => ({
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method }),
    });

    it('POST <stream.path>, the client leaving mid-stream: the request span ends, status unset, with the status code sent', async () => {
      await readFirstRowAndLeave(`${t.url}/rpc/stream`, post('held'));
      // The module saw the client leave: its call span ended so.
      await until(() => sdk.spans().some((s) => s.name === 'held'));
      expect(sdk.spans().find((s) => s.name === 'held')!.attributes['jsonrpc.stream.ending']).toBe('client_gone');
      const request = await requestSpanOf('/rpc/stream');
      expect(request.attributes['http.response.status_code']).toBe(200);
      expect(request.status.code).toBe(SpanStatusCode.UNSET);
    });

    it('GET <stream.path> (EventSource), the client leaving mid-stream: the request span ends', async () => {
      const path = '/rpc/stream?method=held&id=1';
      await readFirstRowAndLeave(t.url + path);
      const request = await requestSpanOf(path);
      expect(request.attributes['http.response.status_code']).toBe(200);
      expect(request.status.code).toBe(SpanStatusCode.UNSET);
    });

    it('a durable attach the client leaves mid-stream: the request span ends; the producer goes on', async () => {
      const started = await (await fetch(`${t.url}/rpc`, post('heldDurable'))).json();
      const path = `/rpc/streams/${started.result.stream_id}`;
      await readFirstRowAndLeave(t.url + path);
      const request = await requestSpanOf(path);
      expect(request.attributes['http.response.status_code']).toBe(200);
      expect(request.status.code).toBe(SpanStatusCode.UNSET);
      // Only the attached client left: the producer still waits at its hold.
      expect(release).toHaveLength(1);
    });

    it('streams that run to their end: the request span ends once, when the response is complete', async () => {
      const started = await (await fetch(`${t.url}/rpc`, post('heldDurable'))).json();
      const attachPath = `/rpc/streams/${started.result.stream_id}`;
      const attached = fetch(t.url + attachPath).then((res) => res.text());
      const live = fetch(`${t.url}/rpc/stream`, post('held')).then((res) => res.text());
      await until(() => release.length === 2);
      releaseAll();
      expect(await live).toContain('"i":2');
      expect(await attached).toContain('event: end');
      for (const path of ['/rpc/stream', attachPath]) {
        const request = await requestSpanOf(path);
        expect(request.attributes['http.response.status_code']).toBe(200);
        expect(request.status.code).toBe(SpanStatusCode.UNSET);
        expect(sdk.spans().filter((s) => s.spanContext().spanId === request.spanContext().spanId)).toHaveLength(1);
      }
    });
  });

  it("names its plugins: @fastify/otel's span names and hook attributes say @nest-jsonrpc/server and the route, never the plugin's source text", async () => {
    await t.rpc({ jsonrpc: '2.0', id: 1, method: 'add', params: { a: 2, b: 3 } });
    await t.post({ jsonrpc: '2.0', id: 's', method: 'count', params: { n: 1 } }, { path: '/rpc/stream' }).then((res) => res.text());
    await until(() => sdk.spans().filter((s) => s.name === 'request').length === 2);
    // Fastify names an anonymous plugin by the first lines of its source, and @fastify/otel puts
    // that name in the spans of the plugin's hooks and handlers.
    const described = sdk.spans().flatMap((s) => [s.name, ...Object.values(s.attributes).map(String)]);
    expect(described.filter((text) => text.includes('=>'))).toEqual([]);
    const handlers = sdk.spans().filter((s) => s.attributes['fastify.type'] === 'request-handler');
    expect(handlers.map((s) => s.attributes['hook.name']).sort()).toEqual(['@nest-jsonrpc/server /rpc - route-handler', '@nest-jsonrpc/server /rpc/stream - route-handler']);
    // The handler span itself, named after the route's handler as Nest's routes are after theirs.
    expect(handlers.map((s) => s.name).sort()).toEqual(['handler - @nest-jsonrpc/server POST /rpc', 'handler - @nest-jsonrpc/server POST /rpc/stream']);
  });
});
