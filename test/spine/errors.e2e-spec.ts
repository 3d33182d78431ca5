/**
 * The RpcException hierarchy and its codes, Nest HttpExceptions mapped as README.md ("Errors")
 * says, and anything else answered as -32603 "Internal error", logged with its stack,
 * its message never sent.
 */
import {
  BadRequestException,
  ConflictException,
  ForbiddenException,
  HttpException,
  HttpStatus,
  Injectable,
  Module,
  NotFoundException,
  ServiceUnavailableException,
  UnauthorizedException,
} from '@nestjs/common';
import {
  JsonRpcModule,
  RpcAccessDeniedException,
  RpcException,
  RpcInternalErrorException,
  RpcInvalidParamsException,
  RpcInvalidRequestException,
  RpcMethodNotFoundException,
  RpcMethod,
  RpcNotFoundException,
  RpcParam,
  RpcParseErrorException,
  RpcRateLimitExceededException,
  RpcRequestTooLargeException,
} from '@nest-jsonrpc/server';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';

/**
 * What `@nestjs/throttler`'s ThrottlerException is (an HttpException, 429, this message). The
 * package itself is CommonJS requiring the ESM-only @nestjs/common, which Node 20 loads but
 * jest's module runtime cannot, so the suite uses a same-shaped stand-in.
 */
class ThrottlerException extends HttpException {
  constructor() {
    super('ThrottlerException: Too Many Requests', HttpStatus.TOO_MANY_REQUESTS);
  }
}

/** A user's own exception: code, message and data are theirs. */
class InsufficientFundsException extends RpcException {
  constructor(balance: number, needed: number) {
    super('Insufficient funds', { code: -32010, data: { balance, needed } });
  }
}

const BUILTINS: Record<string, new (message?: string, options?: { code?: number; data?: unknown; cause?: unknown }) => RpcException> = {
  RpcParseErrorException,
  RpcInvalidRequestException,
  RpcMethodNotFoundException,
  RpcInvalidParamsException,
  RpcInternalErrorException,
  RpcAccessDeniedException,
  RpcNotFoundException,
  RpcRateLimitExceededException,
  RpcRequestTooLargeException,
};

const HTTP_EXCEPTIONS: Record<string, () => unknown> = {
  unauthorized: () => new UnauthorizedException(),
  'unauthorized-with-message': () => new UnauthorizedException('Token expired'),
  forbidden: () => new ForbiddenException(),
  'forbidden-with-message': () => new ForbiddenException('Admins only'),
  'not-found': () => new NotFoundException(),
  'not-found-with-message': () => new NotFoundException('User 42 does not exist'),
  'too-many': () => new HttpException('Too Many Requests', HttpStatus.TOO_MANY_REQUESTS),
  'too-many-with-message': () => new HttpException('Quota of 10 exports per hour used up', HttpStatus.TOO_MANY_REQUESTS),
  throttler: () => new ThrottlerException(),
  'bad-request': () => new BadRequestException(),
  'bad-request-with-messages': () => new BadRequestException(['name must be a string', 'age must be positive']),
  'bad-request-with-message': () => new BadRequestException('date is in the past'),
  conflict: () => new ConflictException('row version 3 is stale (internal detail)'),
  unavailable: () => new ServiceUnavailableException('database pool exhausted (internal detail)'),
};

const THROWABLES: Record<string, () => unknown> = {
  error: () => new Error('connection string postgres://admin:hunter2@db leaked'),
  'type-error': () => (undefined as unknown as { x: { y: number } }).x.y,
  string: () => 'a thrown string with secret detail',
  object: () => ({ secret: 'detail' }),
  null: () => null,
  undefined: () => undefined,
};

@Injectable()
class ErrorMethods {
  @RpcMethod('throw.builtin')
  builtin(@RpcParam('name') name: string, @RpcParam('message', { optional: true }) message?: string, @RpcParam('code', { optional: true }) code?: number) {
    const Exception = BUILTINS[name];
    throw code === undefined ? new Exception(message) : new Exception(message, { code, data: { custom: true } });
  }

  @RpcMethod('throw.base')
  base() {
    throw new RpcException('Quota exhausted', { code: -32050, data: { quota: 10, used: 10 }, cause: new Error('internal cause must not leak') });
  }

  @RpcMethod('throw.base-default-code')
  baseDefaultCode() {
    throw new RpcException('Something specific went wrong');
  }

  @RpcMethod('throw.own-subclass')
  async ownSubclass() {
    await new Promise((r) => setTimeout(r, 1));
    throw new InsufficientFundsException(5, 20);
  }

  @RpcMethod('throw.rate-limit')
  rateLimit() {
    throw new RpcRateLimitExceededException('Slow down', { data: { retryAfter: 7 } });
  }

  @RpcMethod('throw.http')
  http(@RpcParam('kind') kind: string) {
    throw HTTP_EXCEPTIONS[kind]();
  }

  @RpcMethod('throw.other')
  other(@RpcParam('kind') kind: string) {
    throw THROWABLES[kind]();
  }

  @RpcMethod('reject.other')
  async rejectOther(@RpcParam('kind') kind: string) {
    await new Promise((r) => setImmediate(r));
    throw THROWABLES[kind]();
  }
}

@Module({ imports: [JsonRpcModule.forRoot()], providers: [ErrorMethods] })
class ErrorsModule {}

const call = (method: string, params?: unknown, id: unknown = 1) =>
  params === undefined ? { jsonrpc: '2.0', method, id } : { jsonrpc: '2.0', method, params, id };
const err = (error: unknown, id: unknown = 1) => ({ jsonrpc: '2.0', error, id });
const INTERNAL = { code: -32603, message: 'Internal error' };

describe('errors', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(ErrorsModule);
  });
  afterAll(() => t.close());
  beforeEach(() => {
    t.logger.lines.length = 0;
  });

  const expectError = async (request: unknown, error: unknown) => {
    const res = await t.rpc(request);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(err(error, (request as { id: unknown }).id));
    return res;
  };

  describe('built-in exception classes carry their code and default message', () => {
    it.each([
      ['RpcParseErrorException', -32700, 'Parse error'],
      ['RpcInvalidRequestException', -32600, 'Invalid Request'],
      ['RpcMethodNotFoundException', -32601, 'Method not found'],
      ['RpcInvalidParamsException', -32602, 'Invalid params'],
      ['RpcInternalErrorException', -32603, 'Internal error'],
      ['RpcAccessDeniedException', -32001, 'Access denied'],
      ['RpcNotFoundException', -32002, 'Not found'],
      ['RpcRateLimitExceededException', -32003, 'Rate limit exceeded'],
      ['RpcRequestTooLargeException', -32600, 'Invalid Request: request too large'],
    ])('%s -> %d "%s"; a message of its own passes through', async (name, code, message) => {
      await expectError(call('throw.builtin', { name }), { code, message });
      await expectError(call('throw.builtin', { name, message: `${name} says why` }), { code, message: `${name} says why` });
      // Thrown on purpose: an answer, not a fault — nothing is logged as an error.
      expect(t.logger.text('error')).toBe('');
    });

    it('a built-in given another code passes through with that code, its message and data', async () => {
      await expectError(call('throw.builtin', { name: 'RpcNotFoundException', message: 'Archived', code: -32044 }), {
        code: -32044, message: 'Archived', data: { custom: true },
      });
      await expectError(call('throw.builtin', { name: 'RpcInternalErrorException', message: 'Retry later', code: -32099 }), {
        code: -32099, message: 'Retry later', data: { custom: true },
      });
    });
  });

  describe('RpcException(message, { code, data, cause })', () => {
    it('passes code, message and data; the cause is never sent', async () => {
      const res = await expectError(call('throw.base'), { code: -32050, message: 'Quota exhausted', data: { quota: 10, used: 10 } });
      expect(JSON.stringify(res.body)).not.toContain('internal cause');
    });

    it('without a code it is -32603 with its own message (it was thrown on purpose)', async () => {
      await expectError(call('throw.base-default-code'), { code: -32603, message: 'Something specific went wrong' });
    });

    it('a user\'s own subclass passes through (also from an async handler)', async () => {
      await expectError(call('throw.own-subclass', undefined, 'pay'), { code: -32010, message: 'Insufficient funds', data: { balance: 5, needed: 20 } });
    });

    it('a rate-limit error with data.retryAfter also sets Retry-After', async () => {
      const res = await expectError(call('throw.rate-limit'), { code: -32003, message: 'Slow down', data: { retryAfter: 7 } });
      expect(res.headers.get('retry-after')).toBe('7');
    });
  });

  describe('Nest HttpExceptions map as README.md says', () => {
    it.each([
      ['unauthorized', { code: -32001, message: 'Access denied' }],
      ['unauthorized-with-message', { code: -32001, message: 'Token expired' }],
      ['forbidden', { code: -32001, message: 'Access denied' }],
      ['forbidden-with-message', { code: -32001, message: 'Admins only' }],
      ['not-found', { code: -32002, message: 'Not found' }],
      ['not-found-with-message', { code: -32002, message: 'User 42 does not exist' }],
      ['too-many', { code: -32003, message: 'Rate limit exceeded for throw.http' }],
      ['throttler', { code: -32003, message: 'Rate limit exceeded for throw.http' }],
      // Like the other statuses: a message the app wrote is kept, Nest's generic one replaced.
      ['too-many-with-message', { code: -32003, message: 'Quota of 10 exports per hour used up' }],
      ['bad-request', { code: -32602, message: 'Invalid params' }],
      [
        'bad-request-with-messages',
        {
          code: -32602,
          message: 'Invalid params',
          data: [
            { path: null, message: 'name must be a string', code: null },
            { path: null, message: 'age must be positive', code: null },
          ],
        },
      ],
      ['bad-request-with-message', { code: -32602, message: 'Invalid params', data: [{ path: null, message: 'date is in the past', code: null }] }],
    ])('%s -> %j', async (kind, error) => {
      await expectError(call('throw.http', { kind }), error);
      expect(t.logger.text('error')).toBe('');
    });

    it.each(['conflict', 'unavailable'])('any other status (%s) -> -32603 "Internal error", logged, its message not sent', async (kind) => {
      const res = await expectError(call('throw.http', { kind }), INTERNAL);
      expect(JSON.stringify(res.body)).not.toContain('internal detail');
      expect(t.logger.text('error')).toContain('internal detail');
    });
  });

  describe('any other throwable -> -32603 "Internal error", logged with its stack, never sent', () => {
    it.each(['throw.other', 'reject.other'])('%s: an Error', async (method) => {
      const res = await expectError(call(method, { kind: 'error' }), INTERNAL);
      expect(JSON.stringify(res.body)).not.toContain('hunter2');
      const logged = t.logger.lines.filter((l) => l.level === 'error');
      expect(logged).toHaveLength(1);
      expect(logged[0].message).toBe(`Unhandled error in ${method}: connection string postgres://admin:hunter2@db leaked`);
      // The stack goes to the logger as Nest expects (second argument), with the context name.
      expect(String(logged[0].extra[0])).toMatch(/^Error: connection string[\s\S]*\n\s+at /);
      expect(logged[0].extra[1]).toBe('JsonRpc');
    });

    it('a TypeError from a bug in the handler', async () => {
      await expectError(call('throw.other', { kind: 'type-error' }), INTERNAL);
      const logged = t.logger.lines.filter((l) => l.level === 'error');
      expect(logged[0].message).toMatch(/^Unhandled error in throw\.other: Cannot read properties of undefined/);
      expect(String(logged[0].extra[0])).toMatch(/^TypeError: /);
    });

    it.each([
      ['string', 'a thrown string with secret detail'],
      ['object', '{"secret":"detail"}'],
      ['null', 'null'],
      ['undefined', 'undefined'],
    ])('a thrown %s (not an Error)', async (kind, described) => {
      const res = await expectError(call('throw.other', { kind }), INTERNAL);
      expect(JSON.stringify(res.body)).not.toContain('secret');
      const logged = t.logger.lines.filter((l) => l.level === 'error');
      expect(logged).toHaveLength(1);
      expect(logged[0].message).toBe(`Unhandled non-error value thrown in throw.other: ${described}`);
    });
  });

  it('errors in a batch are independent and in order', async () => {
    const res = await t.rpc([
      call('throw.http', { kind: 'not-found' }, 1),
      call('throw.other', { kind: 'error' }, 2),
      call('throw.own-subclass', undefined, 3),
    ]);
    expect(res.body).toEqual([
      err({ code: -32002, message: 'Not found' }, 1),
      err(INTERNAL, 2),
      err({ code: -32010, message: 'Insufficient funds', data: { balance: 5, needed: 20 } }, 3),
    ]);
  });
});
