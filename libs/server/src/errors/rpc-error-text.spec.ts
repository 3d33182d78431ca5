import { formatRpcErrorText } from './rpc-error-text.js';

describe('formatRpcErrorText', () => {
  it('code and message; one line per violation of a -32602 only (a pathless one reads (params))', () => {
    expect(formatRpcErrorText({ code: -32003, message: 'Rate limit exceeded for demo.ping', data: { retryAfter: 9 } })).toBe('Error -32003: Rate limit exceeded for demo.ping');
    expect(
      formatRpcErrorText({
        code: -32602,
        message: 'Invalid params',
        data: [
          { path: 'city', message: 'city must be a string', code: 'isString' },
          { path: null, message: 'property extra should not exist', code: null },
          'not a violation',
        ],
      }),
    ).toBe('Error -32602: Invalid params\n  - city: city must be a string\n  - (params): property extra should not exist');
    // Other codes keep their data out of the text, even a list.
    expect(formatRpcErrorText({ code: -32001, message: 'Access denied', data: [{ path: 'x', message: 'm' }] })).toBe('Error -32001: Access denied');
  });

  it('codeName: names the code unless the message already says it', () => {
    expect(formatRpcErrorText({ code: -32001, message: 'One of the following roles is required: admin' }, { codeName: true })).toBe(
      'Error -32001 (Access denied): One of the following roles is required: admin',
    );
    expect(formatRpcErrorText({ code: -32001, message: 'Access denied' }, { codeName: true })).toBe('Error -32001: Access denied');
    expect(formatRpcErrorText({ code: 1001, message: 'Insufficient funds' }, { codeName: true })).toBe('Error 1001: Insufficient funds');
  });
});
