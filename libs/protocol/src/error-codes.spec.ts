import { RpcErrorCode, RpcErrorMessage } from './error-codes.js';

describe('error codes', () => {
  it('are the spec\'s and the server-defined ones of README.md', () => {
    expect(RpcErrorCode).toEqual({
      ParseError: -32700,
      InvalidRequest: -32600,
      MethodNotFound: -32601,
      InvalidParams: -32602,
      InternalError: -32603,
      AccessDenied: -32001,
      NotFound: -32002,
      RateLimitExceeded: -32003,
    });
  });

  it('carry the spec\'s messages, frozen', () => {
    expect(RpcErrorMessage[-32700]).toBe('Parse error');
    expect(RpcErrorMessage[-32600]).toBe('Invalid Request');
    expect(RpcErrorMessage[-32601]).toBe('Method not found');
    expect(RpcErrorMessage[-32602]).toBe('Invalid params');
    expect(RpcErrorMessage[-32603]).toBe('Internal error');
    expect(Object.isFrozen(RpcErrorMessage)).toBe(true);
  });
});
