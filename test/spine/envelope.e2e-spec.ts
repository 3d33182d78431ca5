/**
 * The request object (spec §4–§6) beyond the §7 examples: jsonrpc, method,
 * params and id rules, which id an error echoes, notifications, reserved names, batch limits and
 * the shapes a handler may return.
 */
import { Injectable, Module } from '@nestjs/common';
import { concat, defer, EMPTY, map, of, throwError, timer } from 'rxjs';
import { JsonRpcModule, RpcMethod, RpcNotFoundException, RpcParam } from '@nest-jsonrpc/server';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';

@Injectable()
class EnvelopeMethods {
  readonly calls: string[] = [];

  @RpcMethod('echo')
  echo(params: unknown) {
    return params ?? null;
  }

  @RpcMethod('record')
  record(@RpcParam('tag') tag: string) {
    this.calls.push(tag);
    return 'recorded';
  }

  @RpcMethod('fails')
  fails() {
    this.calls.push('fails');
    throw new RpcNotFoundException('No such thing');
  }

  @RpcMethod('crashes')
  crashes() {
    this.calls.push('crashes');
    throw new Error('secret internal detail');
  }

  @RpcMethod('returns.value') value() { return { kind: 'value' }; }
  @RpcMethod('returns.falsy') falsy() { return [0, false, '', null]; }
  @RpcMethod('returns.zero') zero() { return 0; }
  @RpcMethod('returns.promise') async promise() { await new Promise((r) => setTimeout(r, 5)); return { kind: 'promise' }; }
  @RpcMethod('returns.observable') observable() { return concat(of('first', 'second'), timer(5).pipe(map(() => 'last'))); }
  @RpcMethod('returns.promise-of-observable') async promiseOfObservable() { return of(1, 2, 3); }
  @RpcMethod('returns.empty-observable') emptyObservable() { return EMPTY; }
  @RpcMethod('returns.failing-observable') failingObservable() { return defer(() => throwError(() => new RpcNotFoundException('Gone'))); }
  @RpcMethod('returns.undefined') nothing() { return undefined; }
  @RpcMethod('returns.async-undefined') async asyncNothing() { /* resolves to undefined */ }
  @RpcMethod('returns.bigint') bigint() { return { n: BigInt(1) }; }
}

@Module({ imports: [JsonRpcModule.forRoot({ maxBatchSize: 3 })], providers: [EnvelopeMethods] })
class EnvelopeModule {}

const INVALID = { code: -32600, message: 'Invalid Request' };
const err = (error: unknown, id: unknown) => ({ jsonrpc: '2.0', error, id });
const ok = (result: unknown, id: unknown) => ({ jsonrpc: '2.0', result, id });

describe('request envelope and responses', () => {
  let t: TestApp;
  let methods: EnvelopeMethods;
  beforeAll(async () => {
    t = await startTestApp(EnvelopeModule);
    methods = t.app.get(EnvelopeMethods);
  });
  afterAll(() => t.close());
  beforeEach(() => {
    methods.calls.length = 0;
  });

  const expectBody = async (request: unknown, expected: unknown) => {
    const res = await t.rpc(request);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.body).toEqual(expected);
  };
  const expectNoAnswer = async (request: unknown) => {
    const res = await t.post(request);
    expect(res.status).toBe(204);
    expect(res.headers.get('content-type')).toBeNull();
    expect(await res.text()).toBe('');
  };

  describe('"jsonrpc" must be the string "2.0"', () => {
    it.each([
      ['"1.0"', '"1.0"'],
      ['the number 2.0', '2.0'],
      ['the string "2"', '"2"'],
      ['null', 'null'],
    ])('%s -> -32600 with the valid id echoed', async (_label, value) => {
      await expectBody(`{"jsonrpc":${value},"method":"echo","id":5}`, err(INVALID, 5));
    });

    it('missing -> -32600, id echoed', async () => {
      await expectBody({ method: 'echo', id: 'a' }, err(INVALID, 'a'));
    });
  });

  describe('"method" must be a string', () => {
    it.each([['a number', 1], ['null', null], ['an object', {}], ['an array', ['echo']], ['a boolean', true]])(
      '%s -> -32600 with the valid id echoed',
      async (_label, method) => {
        await expectBody({ jsonrpc: '2.0', method, id: 9 }, err(INVALID, 9));
      },
    );

    it('missing -> -32600', async () => {
      await expectBody({ jsonrpc: '2.0', id: 9 }, err(INVALID, 9));
    });
  });

  describe('"params", when present, must be an object or an array', () => {
    it.each([['a string', '"bar"'], ['a number', '5'], ['null', 'null'], ['a boolean', 'true']])(
      '%s -> -32600 with the valid id echoed',
      async (_label, params) => {
        await expectBody(`{"jsonrpc":"2.0","method":"echo","params":${params},"id":"p"}`, err(INVALID, 'p'));
      },
    );

    it('objects, arrays and absence are accepted', async () => {
      await expectBody({ jsonrpc: '2.0', method: 'echo', params: { a: 1 }, id: 1 }, ok({ a: 1 }, 1));
      await expectBody({ jsonrpc: '2.0', method: 'echo', params: [1, 'b'], id: 1 }, ok([1, 'b'], 1));
      await expectBody({ jsonrpc: '2.0', method: 'echo', params: [], id: 1 }, ok([], 1));
      await expectBody({ jsonrpc: '2.0', method: 'echo', id: 1 }, ok(null, 1));
    });
  });

  describe('"id" is a string, a number or null', () => {
    it.each([
      ['a string', '"req-1"', 'req-1'],
      ['an empty string', '""', ''],
      ['an integer', '42', 42],
      ['zero', '0', 0],
      ['a negative number', '-7', -7],
      ['a fraction', '1.5', 1.5],
      ['a big number', '12345678901234', 12345678901234],
    ])('%s is echoed unchanged', async (_label, idJson, id) => {
      await expectBody(`{"jsonrpc":"2.0","method":"echo","params":["x"],"id":${idJson}}`, ok(['x'], id));
    });

    it('id: null is a request (not a notification) and gets an answer with id null', async () => {
      await expectBody({ jsonrpc: '2.0', method: 'record', params: { tag: 'null-id' }, id: null }, ok('recorded', null));
      expect(methods.calls).toEqual(['null-id']);
    });

    it.each([['an object', '{"a":1}'], ['an array', '[1]'], ['true', 'true'], ['false', 'false']])(
      '%s -> -32600 with id null, and the method does not run',
      async (_label, idJson) => {
        await expectBody(`{"jsonrpc":"2.0","method":"record","params":{"tag":"bad-id"},"id":${idJson}}`, err(INVALID, null));
        expect(methods.calls).toEqual([]);
      },
    );

    it('an invalid request whose id is valid echoes that id; an invalid id never is', async () => {
      await expectBody({ jsonrpc: '2.0', method: 5, id: 'keep-me' }, err(INVALID, 'keep-me'));
      await expectBody({ jsonrpc: '1.0', method: 'echo', id: { not: 'valid' } }, err(INVALID, null));
    });

    it('members other than jsonrpc/method/params/id are ignored', async () => {
      await expectBody({ jsonrpc: '2.0', method: 'echo', params: [1], id: 1, extra: 'ignored' }, ok([1], 1));
    });
  });

  describe('notifications', () => {
    it('a request without id gets no answer and runs the method', async () => {
      await expectNoAnswer({ jsonrpc: '2.0', method: 'record', params: { tag: 'n1' } });
      expect(methods.calls).toEqual(['n1']);
    });

    it('no answer even on error: unknown method, invalid params, RpcException, internal error', async () => {
      await expectNoAnswer({ jsonrpc: '2.0', method: 'nope' });
      await expectNoAnswer({ jsonrpc: '2.0', method: 'record', params: [1, 2] });
      await expectNoAnswer({ jsonrpc: '2.0', method: 'fails' });
      await expectNoAnswer({ jsonrpc: '2.0', method: 'crashes' });
      expect(methods.calls).toEqual(['fails', 'crashes']);
      // The internal error is still logged, although nobody receives it.
      expect(t.logger.text('error')).toContain('secret internal detail');
    });

    it('an invalid request object without id is not a notification: it is answered with id null (spec §7)', async () => {
      await expectBody({ jsonrpc: '1.0', method: 'record', params: { tag: 'x' } }, err(INVALID, null));
      await expectBody({ jsonrpc: '2.0', method: 'record', params: 'x' }, err(INVALID, null));
      expect(methods.calls).toEqual([]);
    });
  });

  describe('reserved names', () => {
    it('calling an unregistered rpc.* name -> -32601', async () => {
      await expectBody({ jsonrpc: '2.0', method: 'rpc.whatever', id: 1 }, err({ code: -32601, message: 'Method not found' }, 1));
    });

    it('method names are matched exactly (case and whitespace matter)', async () => {
      await expectBody({ jsonrpc: '2.0', method: 'Echo', id: 1 }, err({ code: -32601, message: 'Method not found' }, 1));
      await expectBody({ jsonrpc: '2.0', method: ' echo', id: 2 }, err({ code: -32601, message: 'Method not found' }, 2));
    });
  });

  describe('batches', () => {
    it('[] -> one -32600 error object, not an array', async () => {
      await expectBody('[]', err(INVALID, null));
    });

    it('each invalid item gets its own -32600 entry, valid ones run', async () => {
      await expectBody(
        [1, { jsonrpc: '2.0', method: 'echo', params: ['ok'], id: 'a' }, null],
        [err(INVALID, null), ok(['ok'], 'a'), err(INVALID, null)],
      );
    });

    it('an invalid item keeps its own valid id', async () => {
      await expectBody([{ jsonrpc: '2.0', method: 1, id: 'b' }, 'x'], [err(INVALID, 'b'), err(INVALID, null)]);
    });

    it('an all-notification batch -> 204 with an empty body, and every item runs', async () => {
      await expectNoAnswer([
        { jsonrpc: '2.0', method: 'record', params: { tag: 'a' } },
        { jsonrpc: '2.0', method: 'record', params: { tag: 'b' } },
        { jsonrpc: '2.0', method: 'nope' },
      ]);
      expect(methods.calls.sort()).toEqual(['a', 'b']);
    });

    it('notifications are left out of a mixed batch', async () => {
      await expectBody(
        [{ jsonrpc: '2.0', method: 'record', params: { tag: 'n' } }, { jsonrpc: '2.0', method: 'echo', params: [2], id: 2 }],
        [ok([2], 2)],
      );
    });

    it('a batch at maxBatchSize is served; one item more -> a single -32600 error object and nothing runs', async () => {
      const item = (tag: string, id: number) => ({ jsonrpc: '2.0', method: 'record', params: { tag }, id });
      await expectBody([item('1', 1), item('2', 2), item('3', 3)], [ok('recorded', 1), ok('recorded', 2), ok('recorded', 3)]);
      methods.calls.length = 0;
      await expectBody([item('1', 1), item('2', 2), item('3', 3), item('4', 4)], err({
        code: -32600, message: 'Invalid Request: batch of 4 exceeds the limit of 3',
      }, null));
      expect(methods.calls).toEqual([]);
    });

    it('a batch nested in a batch is one invalid item', async () => {
      await expectBody([[{ jsonrpc: '2.0', method: 'echo', id: 1 }]], [err(INVALID, null)]);
    });
  });

  describe('what a handler may return', () => {
    const expectResult = (method: string, result: unknown) => expectBody({ jsonrpc: '2.0', method, id: method }, ok(result, method));

    it('a plain value', () => expectResult('returns.value', { kind: 'value' }));
    it('falsy values are results, not absences', async () => {
      await expectResult('returns.falsy', [0, false, '', null]);
      await expectResult('returns.zero', 0);
    });
    it('a Promise (its value)', () => expectResult('returns.promise', { kind: 'promise' }));
    it('an Observable (its last value)', () => expectResult('returns.observable', 'last'));
    it('a Promise of an Observable (its last value)', () => expectResult('returns.promise-of-observable', 3));
    it('an Observable that completes empty -> result null', () => expectResult('returns.empty-observable', null));
    it('undefined -> result null (a success must carry a result)', () => expectResult('returns.undefined', null));
    it('a Promise of undefined -> result null', () => expectResult('returns.async-undefined', null));

    it('an Observable that errors -> that error', async () => {
      await expectBody({ jsonrpc: '2.0', method: 'returns.failing-observable', id: 1 }, err({ code: -32002, message: 'Gone' }, 1));
    });

    it('a result JSON cannot represent -> -32603 Internal error, logged', async () => {
      await expectBody({ jsonrpc: '2.0', method: 'returns.bigint', id: 1 }, err({ code: -32603, message: 'Internal error' }, 1));
      expect(t.logger.text('error')).toMatch(/returns\.bigint.*BigInt/);
    });
  });
});
