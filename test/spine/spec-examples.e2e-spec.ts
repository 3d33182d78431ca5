/**
 * Every example of JSON-RPC 2.0 spec §7, verbatim, over real HTTP.
 */
import { Injectable, Module } from '@nestjs/common';
import { JsonRpcModule, RpcMethod, RpcParam } from '@nest-jsonrpc/server';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';

@Injectable()
class SpecMethods {
  readonly notified: unknown[] = [];

  @RpcMethod('subtract')
  subtract(@RpcParam('minuend') minuend: number, @RpcParam('subtrahend') subtrahend: number) {
    return minuend - subtrahend;
  }

  @RpcMethod('sum')
  sum(params: number[]) {
    return params.reduce((a, b) => a + b, 0);
  }

  @RpcMethod('update')
  update(params: unknown) {
    this.notified.push(['update', params]);
  }

  @RpcMethod('notify_hello')
  notifyHello(params: unknown) {
    this.notified.push(['notify_hello', params]);
  }

  @RpcMethod('notify_sum')
  notifySum(params: unknown) {
    this.notified.push(['notify_sum', params]);
  }

  @RpcMethod('get_data')
  getData() {
    return ['hello', 5];
  }
}

@Module({ imports: [JsonRpcModule.forRoot()], providers: [SpecMethods] })
class SpecModule {}

describe('JSON-RPC 2.0 spec §7 examples', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(SpecModule);
  });
  afterAll(() => t.close());

  const expectAnswer = async (request: string, expected: unknown) => {
    const res = await t.rpc(request);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.body).toEqual(expected);
  };
  const expectNoAnswer = async (request: string) => {
    const res = await t.post(request);
    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');
  };

  it('rpc call with positional parameters', async () => {
    await expectAnswer('{"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1}', { jsonrpc: '2.0', result: 19, id: 1 });
    await expectAnswer('{"jsonrpc": "2.0", "method": "subtract", "params": [23, 42], "id": 2}', { jsonrpc: '2.0', result: -19, id: 2 });
  });

  it('rpc call with named parameters', async () => {
    await expectAnswer('{"jsonrpc": "2.0", "method": "subtract", "params": {"subtrahend": 23, "minuend": 42}, "id": 3}', { jsonrpc: '2.0', result: 19, id: 3 });
    await expectAnswer('{"jsonrpc": "2.0", "method": "subtract", "params": {"minuend": 42, "subtrahend": 23}, "id": 4}', { jsonrpc: '2.0', result: 19, id: 4 });
  });

  it('a notification gets no answer, and the handler still runs', async () => {
    const methods = t.app.get(SpecMethods);
    methods.notified.length = 0;
    await expectNoAnswer('{"jsonrpc": "2.0", "method": "update", "params": [1,2,3,4,5]}');
    await expectNoAnswer('{"jsonrpc": "2.0", "method": "foobar"}');
    expect(methods.notified).toEqual([['update', [1, 2, 3, 4, 5]]]);
  });

  it('rpc call of non-existent method', async () => {
    await expectAnswer('{"jsonrpc": "2.0", "method": "foobar", "id": "1"}', {
      jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id: '1',
    });
  });

  it('rpc call with invalid JSON', async () => {
    await expectAnswer('{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]', {
      jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null,
    });
  });

  it('rpc call with invalid Request object', async () => {
    await expectAnswer('{"jsonrpc": "2.0", "method": 1, "params": "bar"}', {
      jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request' }, id: null,
    });
  });

  it('rpc call Batch, invalid JSON', async () => {
    await expectAnswer(
      '[\n  {"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},\n  {"jsonrpc": "2.0", "method"\n]',
      { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null },
    );
  });

  it('rpc call with an empty Array', async () => {
    await expectAnswer('[]', { jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request' }, id: null });
  });

  it('rpc call with an invalid Batch (but not empty)', async () => {
    await expectAnswer('[1]', [{ jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request' }, id: null }]);
  });

  it('rpc call with invalid Batch', async () => {
    const e = { jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request' }, id: null };
    await expectAnswer('[1,2,3]', [e, e, e]);
  });

  it('rpc call Batch', async () => {
    await expectAnswer(
      `[
        {"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},
        {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]},
        {"jsonrpc": "2.0", "method": "subtract", "params": [42,23], "id": "2"},
        {"foo": "boo"},
        {"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"},
        {"jsonrpc": "2.0", "method": "get_data", "id": "9"}
      ]`,
      [
        { jsonrpc: '2.0', result: 7, id: '1' },
        { jsonrpc: '2.0', result: 19, id: '2' },
        { jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request' }, id: null },
        { jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id: '5' },
        { jsonrpc: '2.0', result: ['hello', 5], id: '9' },
      ],
    );
  });

  it('rpc call Batch (all notifications)', async () => {
    const methods = t.app.get(SpecMethods);
    methods.notified.length = 0;
    await expectNoAnswer('[{"jsonrpc": "2.0", "method": "notify_sum", "params": [1,2,4]},{"jsonrpc": "2.0", "method": "notify_hello", "params": [7]}]');
    expect(methods.notified).toEqual([['notify_sum', [1, 2, 4]], ['notify_hello', [7]]]);
  });
});
