import { BadRequestException, ConflictException, ForbiddenException, HttpException, NotFoundException, UnauthorizedException } from '@nestjs/common';
import { RpcExceptionMapper } from './rpc-exception-mapper.js';
import { RpcException, RpcInvalidParamsException } from './rpc-exceptions.js';

class QuietMapper extends RpcExceptionMapper {
  readonly errors: string[] = [];
  constructor() {
    super();
    (this as unknown as { logger: unknown }).logger = { error: (line: string) => this.errors.push(line) };
  }
}

describe('RpcExceptionMapper', () => {
  const mapper = new QuietMapper();

  it('an RpcException passes through: code, message and data', () => {
    expect(mapper.toErrorObject(new RpcException('Insufficient funds', { code: 1001, data: { balance: 1 } }))).toEqual({
      code: 1001, message: 'Insufficient funds', data: { balance: 1 },
    });
    expect(mapper.toErrorObject(new RpcInvalidParamsException())).toEqual({ code: -32602, message: 'Invalid params' });
  });

  it('Nest HTTP exceptions map by status; generic messages are replaced, own ones kept', () => {
    expect(mapper.toErrorObject(new UnauthorizedException())).toEqual({ code: -32001, message: 'Access denied' });
    expect(mapper.toErrorObject(new ForbiddenException('Admins only'))).toEqual({ code: -32001, message: 'Admins only' });
    expect(mapper.toErrorObject(new NotFoundException())).toEqual({ code: -32002, message: 'Not found' });
    expect(mapper.toErrorObject(new HttpException('Too Many Requests', 429), 'm.x')).toEqual({ code: -32003, message: 'Rate limit exceeded for m.x' });
    expect(mapper.toErrorObject(new BadRequestException(['a must be a number', 'b is required']))).toEqual({
      code: -32602,
      message: 'Invalid params',
      data: [
        { path: null, message: 'a must be a number', code: null },
        { path: null, message: 'b is required', code: null },
      ],
    });
  });

  it('anything else is -32603 with the fixed message: the cause is logged with where it happened, never sent', () => {
    const before = mapper.errors.length;
    expect(mapper.toErrorObject(new Error('password=hunter2'), 'db.query')).toEqual({ code: -32603, message: 'Internal error' });
    expect(mapper.toErrorObject(new ConflictException('dup'))).toEqual({ code: -32603, message: 'Internal error' });
    expect(mapper.toErrorObject({ weird: true })).toEqual({ code: -32603, message: 'Internal error' });
    expect(mapper.errors.slice(before)).toEqual([
      'Unhandled error in db.query: password=hunter2',
      'Unhandled error: dup',
      'Unhandled non-error value thrown: {"weird":true}',
    ]);
  });

  it('a subclass that maps to something that is not an error object (a 1.5 code) yields -32603, logged', () => {
    class Broken extends QuietMapper {
      protected override map() {
        return { code: 1.5, message: 'x' };
      }
    }
    const broken = new Broken();
    expect(broken.toErrorObject(new Error('x'), 'm')).toEqual({ code: -32603, message: 'Internal error' });
    expect(broken.errors).toEqual(['Unhandled error in m: the exception mapper produced an invalid error object (code 1.5)']);
  });

  it('mapError is pure: the error object and the cause to log, nothing logged, the same answer each time', () => {
    const mapper = new QuietMapper();
    const thrown = new Error('disk on fire');
    const first = mapper.mapError(thrown, 'm');
    expect(first).toEqual({ error: { code: -32603, message: 'Internal error' }, unhandled: { cause: thrown } });
    expect(mapper.mapError(thrown, 'm')).toEqual(first);
    expect(mapper.mapError(new RpcException('chosen', { code: -32603 }), 'm')).toEqual({ error: { code: -32603, message: 'chosen' } });
    expect(mapper.mapError(new NotFoundException(), 'm')).toEqual({ error: { code: -32002, message: 'Not found' } });
    expect(mapper.errors).toEqual([]);
    // toErrorObject logs the cause each time it answers: it keeps no memory of earlier mappings.
    mapper.toErrorObject(thrown, 'm');
    mapper.toErrorObject(thrown, 'm');
    expect(mapper.errors).toEqual(['Unhandled error in m: disk on fire', 'Unhandled error in m: disk on fire']);
  });
});
