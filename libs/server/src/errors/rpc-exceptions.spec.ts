import {
  RpcAccessDeniedException,
  RpcBuiltinException,
  RpcException,
  RpcInternalErrorException,
  RpcInvalidParamsException,
  RpcInvalidRequestException,
  RpcMethodNotFoundException,
  RpcNotFoundException,
  RpcParseErrorException,
  RpcRateLimitExceededException,
  RpcRequestTooLargeException,
} from './rpc-exceptions.js';

describe('the built-in exceptions', () => {
  it.each([
    [RpcParseErrorException, -32700, 'Parse error'],
    [RpcInvalidRequestException, -32600, 'Invalid Request'],
    [RpcMethodNotFoundException, -32601, 'Method not found'],
    [RpcInvalidParamsException, -32602, 'Invalid params'],
    [RpcInternalErrorException, -32603, 'Internal error'],
    [RpcAccessDeniedException, -32001, 'Access denied'],
    [RpcNotFoundException, -32002, 'Not found'],
    [RpcRateLimitExceededException, -32003, 'Rate limit exceeded'],
    [RpcRequestTooLargeException, -32600, 'Invalid Request: request too large'],
  ])('%p: its own code and default message; a message, data, cause and code of the caller win', (Exception, code, message) => {
    const plain = new Exception();
    expect(plain).toBeInstanceOf(RpcBuiltinException);
    expect(plain).toBeInstanceOf(RpcException);
    expect(plain).toBeInstanceOf(Error);
    expect(plain.name).toBe(Exception.name);
    expect(plain.toErrorObject()).toEqual({ code, message });

    const cause = new Error('disk full');
    const told = new Exception('Told', { data: { field: 'a' }, cause });
    expect(told.toErrorObject()).toEqual({ code, message: 'Told', data: { field: 'a' } });
    expect(told.cause).toBe(cause);
    expect(new Exception(undefined, { code: 4000 }).toErrorObject()).toEqual({ code: 4000, message });
  });

  it('a non-integer code fails at construction', () => {
    expect(() => new RpcNotFoundException('x', { code: 1.5 })).toThrow(new TypeError('RpcException code must be an integer, got 1.5'));
  });

  it('RpcRequestTooLargeException.forLimit names the limit', () => {
    expect(RpcRequestTooLargeException.forLimit(1024).toErrorObject()).toEqual({ code: -32600, message: 'Invalid Request: body exceeds 1024 bytes' });
  });
});

describe('an exception of the app built on RpcBuiltinException', () => {
  class RpcConflictException extends RpcBuiltinException {
    static override readonly defaultCode = 409;
    static override readonly defaultMessage = 'Conflict';
  }

  it("answers with its own statics, and a caller's message and code still win", () => {
    expect(new RpcConflictException().toErrorObject()).toEqual({ code: 409, message: 'Conflict' });
    expect(new RpcConflictException('Taken', { code: 410 }).toErrorObject()).toEqual({ code: 410, message: 'Taken' });
    expect(new RpcConflictException().name).toBe('RpcConflictException');
  });
});
