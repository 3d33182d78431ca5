/**
 * Where a call's span hangs: under the app's HTTP span when Fastify is instrumented
 * (simulated here the way `@fastify/otel` does it: the request runs inside its span's context),
 * and under the calling call's span for a call made through the pipeline from a handler (how MCP
 * and LLM tool calls run: `callOf` + `run`, transport 'tool').
 */
import { Injectable, Module } from '@nestjs/common';
import { context, trace } from '@opentelemetry/api';
import { JsonRpcModule, RpcCtx, RpcMethod, RpcParam, type RpcContext } from '@nest-jsonrpc/server';
import { RpcPipeline } from '../../libs/server/src/pipeline/rpc-pipeline.js';
import { aroundEveryRequest, startTestApp, type TestApp } from '../support/rpc-test-app.js';
import { installTestSdk, until, type TestSdk } from './otel-test-sdk.js';

@Injectable()
class Methods {
  constructor(private readonly pipeline: RpcPipeline) {}

  @RpcMethod('inner')
  inner(@RpcParam('n') n: number) {
    return n + 1;
  }

  @RpcMethod('outer')
  async outer(@RpcCtx() ctx: RpcContext) {
    const call = this.pipeline.callOf('inner', { n: 1 }, ctx.exchange, 'tool', { id: 'tool-1' })!;
    return { inner: await this.pipeline.run(call) };
  }
}

@Module({ imports: [JsonRpcModule.forRoot()], providers: [Methods] })
class App {}

describe('span parents', () => {
  let sdk: TestSdk;
  let t: TestApp;

  beforeAll(async () => {
    sdk = installTestSdk();
    t = await startTestApp(App, (app) => {
      const tracer = trace.getTracer('http-instrumentation');
      aroundEveryRequest(app, (request, reply, proceed) => {
        const span = tracer.startSpan(`HTTP ${request.method}`);
        reply.onClose(() => span.end());
        context.with(trace.setSpan(context.active(), span), proceed);
      });
    });
  });

  afterAll(async () => {
    await t.close();
    await sdk.uninstall();
  });

  beforeEach(() => sdk.exporter.reset());

  it("calls are children of the app's HTTP span (batch items its siblings); the module opens none", async () => {
    await t.rpc([
      { jsonrpc: '2.0', id: 1, method: 'inner', params: { n: 1 } },
      { jsonrpc: '2.0', id: 2, method: 'inner', params: { n: 2 } },
    ]);
    await until(() => sdk.spans().some((s) => s.name === 'HTTP POST'));
    const http = sdk.spans().find((s) => s.name === 'HTTP POST')!;
    const calls = sdk.spans().filter((s) => s.name === 'inner');
    expect(calls).toHaveLength(2);
    for (const call of calls) expect(call.parentSpanContext?.spanId).toBe(http.spanContext().spanId);
    expect(sdk.spans().filter((s) => s.name.startsWith('POST'))).toHaveLength(0);
  });

  it('a call made from a handler through the pipeline (a tool call) is a child of the calling call', async () => {
    const { body } = await t.rpc({ jsonrpc: '2.0', id: 1, method: 'outer' });
    expect(body.result).toEqual({ inner: 2 });
    await until(() => sdk.spans().some((s) => s.name === 'HTTP POST'));
    const outer = sdk.spans().find((s) => s.name === 'outer')!;
    const inner = sdk.spans().find((s) => s.name === 'inner')!;
    expect(inner.parentSpanContext?.spanId).toBe(outer.spanContext().spanId);
    expect(inner.attributes).toEqual({
      'rpc.system.name': 'jsonrpc',
      'rpc.method': 'inner',
      'jsonrpc.protocol.version': '2.0',
      'jsonrpc.request.id': 'tool-1',
    });
  });
});
