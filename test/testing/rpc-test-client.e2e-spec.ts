/**
 * `@nest-jsonrpc/server/testing` as a Nest user writes a test: `Test.createTestingModule(...)`,
 * `createNestApplication(...)`, then `createRpcTestClient(app)`. Every call goes over HTTP through
 * the app's own routes (custom paths included), so app guards, roles, rate limits, validation,
 * streams, durable streams and MCP tools behave as in production; errors are the client's classes.
 */
import { Injectable, Module, type CanActivate, type ExecutionContext, type INestApplication } from '@nestjs/common';
import { testAdapter } from '../support/rpc-test-app.js';
import { APP_GUARD } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { IsInt, Max, Min } from 'class-validator';
import {
  JsonRpcModule,
  MemoryStreamStore,
  RpcException,
  RpcMcp,
  RpcMethod,
  RpcRateLimit,
  RpcStream,
  progress,
  type RpcContext,
} from '@nest-jsonrpc/server';
import { createRpcTestClient, JsonRpcError, JsonRpcProtocolError, RpcTestClient } from '@nest-jsonrpc/server/testing';
import { rejectionOf } from '../support/async.js';

class AddParams {
  @IsInt() a!: number;
  @IsInt() b!: number;
}

class CountParams {
  @IsInt() @Min(1) @Max(5) count!: number;
}

/** Who calls: `x-user` / `x-roles` headers, set on the request by an app guard (runs before roles). */
@Injectable()
class HeaderIdentityGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest();
    const id = request.headers['x-user'];
    if (typeof id === 'string') request.user = { id, roles: String(request.headers['x-roles'] ?? '').split(',').filter(Boolean) };
    return true;
  }
}

const notified: unknown[] = [];

@Injectable()
class CalculatorRpc {
  @RpcMethod('math.add', { result: Object })
  @RpcMcp({ title: 'Add' })
  add(params: AddParams) {
    return { sum: params.a + params.b };
  }

  @RpcMethod('audit.log')
  log(params: { line: string }) {
    notified.push(params);
  }

  @RpcMethod('fail')
  fail() {
    throw new RpcException('Nope', { code: 4000, data: { why: 'because' } });
  }

  @RpcMethod('admin.stats', { roles: ['admin'] })
  stats(_params: unknown, ctx: RpcContext<{ id: string }>) {
    return { by: ctx.user?.id };
  }

  @RpcMethod('limited.ping')
  @RpcRateLimit({ limit: 1, interval: 60 })
  ping() {
    return 'pong';
  }

  @RpcMethod('count')
  @RpcStream()
  async *count(params: CountParams): AsyncGenerator<{ n: number }> {
    for (let n = 1; n <= params.count; n++) yield { n };
  }

  @RpcMethod('report.build')
  @RpcStream({ durable: true })
  async *report(params: CountParams): AsyncGenerator<unknown> {
    for (let step = 1; step <= params.count; step++) yield progress({ step });
    yield { url: '/reports/1.pdf' };
  }
}

@Module({
  imports: [
    JsonRpcModule.forRoot({
      path: '/api/rpc',
      stream: { enabled: true, path: '/api/rpc-stream' },
      durable: { enabled: true, path: '/api/streams', store: new MemoryStreamStore() },
      mcp: { enabled: true, path: '/agents/mcp' },
    }),
  ],
  providers: [CalculatorRpc, { provide: APP_GUARD, useClass: HeaderIdentityGuard }],
})
class AppModule {}


describe('createRpcTestClient(app) from @nest-jsonrpc/server/testing', () => {
  let app: INestApplication;
  let rpc: RpcTestClient;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    app = moduleRef.createNestApplication<INestApplication>(testAdapter(), { logger: false });
    rpc = await createRpcTestClient(app);
  });
  afterAll(async () => {
    await app.close();
  });

  it('starts the app on 127.0.0.1, port 0, and uses the paths the module serves', async () => {
    expect(app.getHttpServer().listening).toBe(true);
    expect(rpc.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect([rpc.url, rpc.streamUrl, rpc.streamsUrl, rpc.mcpUrl]).toEqual(
      ['/api/rpc', '/api/rpc-stream', '/api/streams', '/agents/mcp'].map((path) => rpc.baseUrl + path),
    );
    // A second client for the same app reuses the running server.
    const again = await createRpcTestClient(app);
    expect(again.baseUrl).toBe(rpc.baseUrl);
  });

  it('call: the result, or a JsonRpcError with the code, message and data the server answered', async () => {
    expect(await rpc.call('math.add', { a: 2, b: 3 })).toEqual({ sum: 5 });
    const failed = await rejectionOf(rpc.call('fail'), JsonRpcError);
    expect([failed.code, failed.message, failed.data]).toEqual([4000, 'Nope', { why: 'because' }]);
    const invalid = await rejectionOf(rpc.call('math.add', { a: 'two', b: 3 }), JsonRpcError);
    expect([invalid.code, invalid.data]).toEqual([-32602, [{ path: 'a', message: 'a must be an integer number', code: 'isInt' }]]);
    expect((await rejectionOf(rpc.call('no.such'), JsonRpcError)).code).toBe(-32601);
  });

  it('notify and batch', async () => {
    await rpc.notify('audit.log', { line: 'hi' });
    expect(notified).toEqual([{ line: 'hi' }]);
    const settled = await rpc.batch([{ method: 'math.add', params: { a: 1, b: 1 } }, { method: 'fail' }, { method: 'audit.log', params: { line: 'b' }, notification: true }]);
    expect(settled[0]).toEqual({ status: 'fulfilled', value: { sum: 2 } });
    expect(settled[1]).toEqual({ status: 'rejected', reason: expect.any(JsonRpcError) });
    expect(settled[1].status === 'rejected' && (settled[1].reason as JsonRpcError).code).toBe(4000);
    expect(settled[2]).toEqual({ status: 'fulfilled', value: undefined });
  });

  it('roles and rate limits apply: withHeaders gives another caller', async () => {
    const anonymous = await rejectionOf(rpc.call('admin.stats'), JsonRpcError);
    expect(anonymous.code).toBe(-32001);
    const admin = rpc.withHeaders({ 'x-user': 'ada', 'x-roles': 'admin' });
    expect(admin).toBeInstanceOf(RpcTestClient);
    expect(await admin.call('admin.stats')).toEqual({ by: 'ada' });
    expect(await rpc.call('limited.ping')).toBe('pong');
    expect((await rejectionOf(rpc.call('limited.ping'), JsonRpcError)).code).toBe(-32003);
  });

  it('stream: rows as an async iterable; invalid params reject before any row', async () => {
    const rows: unknown[] = [];
    for await (const row of rpc.stream<{ n: number }>('count', { count: 3 })) rows.push(row);
    expect(rows).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    const invalid = rpc.stream('count', { count: 9 })[Symbol.asyncIterator]().next();
    expect((await rejectionOf(invalid, JsonRpcError)).code).toBe(-32602);
  });

  it('start and attach: a durable stream from its stream_id to its terminal event', async () => {
    const started = await rpc.start('report.build', { count: 2 });
    expect(started).toEqual({ stream_id: expect.any(String), sse_url: `/api/streams/${started.stream_id}`, status: 'running' });
    const events: Array<[string, unknown]> = [];
    for await (const event of rpc.attach(started.stream_id)) events.push([event.event, event.data]);
    expect(events).toEqual([
      ['progress', { step: 1 }],
      ['progress', { step: 2 }],
      ['chunk', { url: '/reports/1.pdf' }],
      ['done', {}],
    ]);
    expect((await rejectionOf(rpc.start('report.build', { count: 0 }), JsonRpcError)).code).toBe(-32602);
    const notDurable = await rejectionOf(rpc.start('math.add', { a: 1, b: 2 }), JsonRpcProtocolError);
    expect(notDurable.message).toBe('math.add did not start a durable stream: its result has no stream_id');
  });

  it('callTool: an MCP tools/call through the MCP route', async () => {
    expect(await rpc.callTool('math.add', { a: 2, b: 3 })).toEqual({ content: [{ type: 'text', text: '{"sum":5}' }] });
    const invalid = await rpc.callTool('math.add', { a: 'x', b: 3 });
    expect(invalid.isError).toBe(true);
    expect(invalid.structuredContent).toBeUndefined();
    expect(invalid.content).toEqual([{ type: 'text', text: 'Error -32602: Invalid params\n  - a: a must be an integer number' }]);
    expect(invalid._meta).toEqual({
      'nest-jsonrpc/error': { code: -32602, message: 'Invalid params', data: [{ path: 'a', message: 'a must be an integer number', code: 'isInt' }] },
    });
    const unknown = await rejectionOf(rpc.callTool('admin.stats'), JsonRpcError);
    expect([unknown.code, unknown.message]).toEqual([-32602, 'Unknown tool: admin.stats']);
  });
});

describe('createRpcTestClient on other apps', () => {
  it('uses an app that listens already, and says when the app has no JsonRpcModule or no MCP', async () => {
    @Injectable()
    class MathRpc {
      @RpcMethod('math.add')
      add(params: AddParams) {
        return { sum: params.a + params.b };
      }
    }
    @Module({ imports: [JsonRpcModule.forRoot()], providers: [MathRpc] })
    class PlainModule {}
    const moduleRef = await Test.createTestingModule({ imports: [PlainModule] }).compile();
    const app = moduleRef.createNestApplication<INestApplication>(testAdapter(), { logger: false });
    await app.listen(0, '127.0.0.1');
    try {
      const rpc = await createRpcTestClient(app, { headers: { 'x-anything': '1' } });
      expect(rpc.baseUrl).toBe(`http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`);
      expect(rpc.url).toBe(`${rpc.baseUrl}/rpc`);
      expect(await rpc.call('math.add', { a: 1, b: 1 })).toEqual({ sum: 2 });
      await expect(rpc.callTool('math.add')).rejects.toThrow('callTool: the app does not serve MCP (JsonRpcModule option mcp: { enabled: true })');
    } finally {
      await app.close();
    }

    @Module({})
    class EmptyModule {}
    const bare = (await Test.createTestingModule({ imports: [EmptyModule] }).compile()).createNestApplication(testAdapter(), { logger: false });
    await expect(createRpcTestClient(bare)).rejects.toThrow(
      "createRpcTestClient: the application does not import JsonRpcModule (add JsonRpcModule.forRoot() to the testing module's imports)",
    );
    await bare.close();
  });
});
