/**
 * An MCP `tools/call` is a call like any other (docs/observability.md): one SERVER span named by
 * the method, with the conventional attributes and the tool call's JSON-RPC id, a child of the
 * request's `traceparent`, active while the handler runs; a failing tool records its code.
 */
import { Injectable, Module } from '@nestjs/common';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { IsNumber } from 'class-validator';
import { JsonRpcModule, RpcMcp, RpcMethod, RpcNotFoundException } from '@nest-jsonrpc/server';
import { mcpRequest, postMcp, type Era } from '../mcp/support/mcp-wire.js';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';
import { installTestSdk, until, type TestSdk } from './otel-test-sdk.js';

class AddDto {
  @IsNumber() a!: number;
  @IsNumber() b!: number;
}

@Injectable()
class SpannedTools {
  @RpcMethod('span.add')
  @RpcMcp()
  add(params: AddDto) {
    // A span the handler opens is a child of the call's span.
    trace.getTracer('app').startActiveSpan('inner', (span) => span.end());
    return params.a + params.b;
  }

  @RpcMethod('span.missing')
  @RpcMcp()
  missing() {
    throw new RpcNotFoundException('no such thing');
  }
}

@Module({ imports: [JsonRpcModule.forRoot({ mcp: { enabled: true } })], providers: [SpannedTools] })
class McpSpansModule {}

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';

describe('MCP tools/call spans', () => {
  let sdk: TestSdk;
  let t: TestApp;

  beforeAll(async () => {
    sdk = installTestSdk();
    t = await startTestApp(McpSpansModule);
  });
  afterAll(async () => {
    await t.close();
    await sdk.uninstall();
  });
  beforeEach(() => sdk.exporter.reset());

  const only = (name: string): ReadableSpan => {
    const spans = sdk.spans().filter((s) => s.name === name);
    expect(spans).toHaveLength(1);
    return spans[0];
  };

  for (const era of ['2025', '2026'] as Era[]) {
    it(`${era}: one SERVER span per tool call, named by the method, under the request's traceparent, active in the handler`, async () => {
      const request = mcpRequest(era, 41, 'tools/call', { name: 'span.add', arguments: { a: 2, b: 3 } }, { headers: { traceparent: `00-${TRACE_ID}-${PARENT_ID}-01` } });
      const res = await postMcp(`${t.url}/mcp`, request);
      expect(res.status).toBe(200);
      expect(res.body.id).toBe(41);
      expect(res.body.result.isError).toBeUndefined();
      expect(res.body.result.content).toEqual([{ type: 'text', text: '5' }]);
      await until(() => sdk.spans().some((s) => s.name === 'span.add'));
      const span = only('span.add');
      expect(span.kind).toBe(SpanKind.SERVER);
      expect(span.attributes).toEqual({
        'rpc.system.name': 'jsonrpc',
        'rpc.method': 'span.add',
        'jsonrpc.protocol.version': '2.0',
        'jsonrpc.request.id': '41',
      });
      expect(span.status.code).toBe(SpanStatusCode.UNSET);
      expect(span.spanContext().traceId).toBe(TRACE_ID);
      expect(span.parentSpanContext?.spanId).toBe(PARENT_ID);
      expect(only('inner').parentSpanContext?.spanId).toBe(span.spanContext().spanId);
    });
  }

  it('a tool that fails: isError for the agent, rpc.status_code and status ERROR on its span', async () => {
    const res = await postMcp(`${t.url}/mcp`, mcpRequest('2026', 'm-1', 'tools/call', { name: 'span.missing', arguments: {} }));
    expect(res.status).toBe(200);
    expect(res.body.result.isError).toBe(true);
    await until(() => sdk.spans().some((s) => s.name === 'span.missing'));
    const span = only('span.missing');
    expect(span.attributes).toEqual({
      'rpc.system.name': 'jsonrpc',
      'rpc.method': 'span.missing',
      'jsonrpc.protocol.version': '2.0',
      'jsonrpc.request.id': 'm-1',
      'rpc.status_code': '-32002',
      'error.type': '-32002',
    });
    expect(span.status.code).toBe(SpanStatusCode.ERROR);
  });

  it('tools/list is not a call: no span', async () => {
    const res = await postMcp(`${t.url}/mcp`, mcpRequest('2026', 2, 'tools/list'));
    expect(res.body.result.tools.map((tool: { name: string }) => tool.name).sort()).toEqual(['span.add', 'span.missing']);
    expect(sdk.spans()).toEqual([]);
  });
});
