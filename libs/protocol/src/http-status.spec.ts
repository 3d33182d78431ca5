import { RpcErrorCode } from './error-codes.js';
import { httpStatusForCode } from './http-status.js';

describe('httpStatusForCode', () => {
  it.each([
    [RpcErrorCode.ParseError, 400],
    [RpcErrorCode.InvalidRequest, 400],
    [RpcErrorCode.InvalidParams, 400],
    [RpcErrorCode.AccessDenied, 400],
    [RpcErrorCode.MethodNotFound, 404],
    [RpcErrorCode.NotFound, 404],
    [RpcErrorCode.RateLimitExceeded, 429],
    [RpcErrorCode.InternalError, 500],
  ])('%d -> %d', (code, status) => {
    expect(httpStatusForCode(code)).toBe(status);
  });

  it('other codes in the spec\'s server-error range -32000..-32099 -> 500', () => {
    for (const code of [-32000, -32050, -32099]) expect(httpStatusForCode(code)).toBe(500);
  });

  it('application codes outside that range -> 400', () => {
    for (const code of [1, 0, -1, 1001, -31999, -32100, -32768]) expect(httpStatusForCode(code)).toBe(400);
  });
});
