import { isInvalidEnvelope, isReservedMethodName, isValidId, parseRequestEnvelope } from './envelope.js';

const INVALID = { code: -32600, message: 'Invalid Request' };

describe('parseRequestEnvelope', () => {
  it('accepts a full request and keeps its members', () => {
    expect(parseRequestEnvelope({ jsonrpc: '2.0', method: 'm', params: [1], id: 3 })).toEqual({
      jsonrpc: '2.0', method: 'm', params: [1], id: 3, isNotification: false,
    });
  });

  it('a request without an id member is a notification; id: null is not', () => {
    expect(parseRequestEnvelope({ jsonrpc: '2.0', method: 'm' })).toEqual({
      jsonrpc: '2.0', method: 'm', params: undefined, id: undefined, isNotification: true,
    });
    expect(parseRequestEnvelope({ jsonrpc: '2.0', method: 'm', id: null })).toMatchObject({ id: null, isNotification: false });
  });

  it('an inherited id does not count: only an own member makes a request', () => {
    const withInheritedId = Object.create({ id: 5 }) as Record<string, unknown>;
    withInheritedId.jsonrpc = '2.0';
    withInheritedId.method = 'm';
    expect(parseRequestEnvelope(withInheritedId)).toMatchObject({ isNotification: true, id: undefined });
  });

  it.each([
    ['a number', 1],
    ['a string', 'x'],
    ['null', null],
    ['an array', [{ jsonrpc: '2.0', method: 'm', id: 1 }]],
    ['true', true],
    ['undefined', undefined],
  ])('%s is not a request object -> invalid, id null', (_label, value) => {
    const result = parseRequestEnvelope(value);
    expect(isInvalidEnvelope(result)).toBe(true);
    expect(result).toEqual({ invalid: INVALID, id: null });
  });

  it.each([
    [{ method: 'm', id: 1 }, 1],
    [{ jsonrpc: 2, method: 'm', id: 'a' }, 'a'],
    [{ jsonrpc: '2.0 ', method: 'm', id: 0 }, 0],
    [{ jsonrpc: '2.0', id: null }, null],
    [{ jsonrpc: '2.0', method: 7, id: 2 }, 2],
    [{ jsonrpc: '2.0', method: 'm', params: 'p', id: 3 }, 3],
    [{ jsonrpc: '2.0', method: 'm', params: null, id: 4 }, 4],
    [{ jsonrpc: '2.0', method: 'm', params: 0 }, null],
  ])('%j -> invalid, echoing id %j', (value, id) => {
    expect(parseRequestEnvelope(value)).toEqual({ invalid: INVALID, id });
  });

  it.each([[{}], [[]], [true], [false], [Number.NaN], [Number.POSITIVE_INFINITY]])('an id of %j -> invalid with id null', (id) => {
    expect(parseRequestEnvelope({ jsonrpc: '2.0', method: 'm', id })).toEqual({
      invalid: INVALID, id: null,
    });
  });

  it('with both a bad id and a bad jsonrpc, the id is still never echoed', () => {
    expect(parseRequestEnvelope({ jsonrpc: '1.0', method: 'm', id: { a: 1 } })).toMatchObject({ id: null });
  });

  it('ignores members it does not know', () => {
    expect(parseRequestEnvelope({ jsonrpc: '2.0', method: 'm', id: 1, extra: true })).toEqual({
      jsonrpc: '2.0', method: 'm', params: undefined, id: 1, isNotification: false,
    });
  });
});

describe('isValidId', () => {
  it.each([['a', true], ['', true], [0, true], [-1.5, true], [null, true], [undefined, false], [true, false], [{}, false], [[], false], [Number.NaN, false]])(
    '%j -> %s',
    (id, expected) => {
      expect(isValidId(id)).toBe(expected);
    },
  );
});

describe('isReservedMethodName', () => {
  it.each([['rpc.discover', true], ['rpc.', true], ['rpc', false], ['RPC.x', false], ['my.rpc.x', false], ['rpcx', false]])('%s -> %s', (name, expected) => {
    expect(isReservedMethodName(name)).toBe(expected);
  });
});
