/**
 * Params: DTOs, @RpcParams, @RpcParam (named and positional), @RpcCtx, unknown
 * keys, violations with dotted paths, positional DTOs, missing and mistyped params.
 */
import { Injectable, Module } from '@nestjs/common';
import { Type } from 'class-transformer';
import { IsEmail, IsInt, IsOptional, IsString, Min, MinLength, ValidateNested } from 'class-validator';
import { JsonRpcModule, RpcContext, RpcCtx, RpcMethod, RpcParam, RpcParams } from '@nest-jsonrpc/server';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';

class AddDto {
  @IsInt() a!: number;
  @IsInt() b!: number;
}

class AddressDto {
  @IsString() @MinLength(2) city!: string;
  @IsOptional() @IsString() street?: string;
}

class ItemDto {
  @IsString() sku!: string;
  @IsInt() @Min(1) qty!: number;
}

class UserDto {
  @IsEmail() email!: string;
  @ValidateNested() @Type(() => AddressDto) address!: AddressDto;
  @IsOptional() @ValidateNested({ each: true }) @Type(() => ItemDto) items?: ItemDto[];
}

class PointDto {
  @IsInt() x!: number;
  @IsInt() y!: number;
  @IsOptional() @IsString() label?: string;
}

@Injectable()
class ParamMethods {
  @RpcMethod('dto.undecorated')
  undecorated(p: AddDto, ctx: RpcContext) {
    return { isDto: p instanceof AddDto, sum: p.a + p.b, method: ctx.method, id: ctx.id };
  }

  @RpcMethod('dto.decorated')
  decorated(@RpcCtx() ctx: RpcContext, @RpcParams() p: AddDto) {
    return { isDto: p instanceof AddDto, sum: p.a + p.b, method: ctx.method };
  }

  @RpcMethod('dto.lenient', { rejectUnknown: false })
  lenient(p: AddDto) {
    return { keys: Object.keys(p).sort(), sum: p.a + p.b };
  }

  @RpcMethod('user.update')
  updateUser(@RpcParams() dto: UserDto) {
    return { email: dto.email, city: dto.address.city, addressIsDto: dto.address instanceof AddressDto, items: dto.items?.length ?? 0 };
  }

  @RpcMethod('point.positional', { allowPositional: true })
  positional(p: PointDto) {
    return { isDto: p instanceof PointDto, ...p };
  }

  @RpcMethod('named.subtract')
  subtract(@RpcParam('minuend') minuend: number, @RpcParam('subtrahend') subtrahend: number) {
    return minuend - subtrahend;
  }

  @RpcMethod('named.greet')
  greet(
    @RpcCtx() ctx: RpcContext,
    @RpcParam('name') name: string,
    @RpcParam('greeting', { default: 'Hello' }) greeting: string,
    @RpcParam('shout', { optional: true }) shout?: boolean,
  ) {
    const text = `${greeting}, ${name}`;
    return { text: shout ? text.toUpperCase() : text, shout: shout ?? 'absent', ctxIsRpcContext: ctx instanceof RpcContext };
  }

  @RpcMethod('named.types')
  types(@RpcParam('n') n: number, @RpcParam('s') s: string, @RpcParam('b') b: boolean, @RpcParam('list') list: string[]) {
    return [n, s, b, list];
  }

  @RpcMethod('named.nested')
  nested(@RpcParam('id') id: number, @RpcParam('address') address: AddressDto) {
    return { id, city: address.city, isDto: address instanceof AddressDto };
  }

  @RpcMethod('raw.any')
  raw(params: unknown, ctx: RpcContext) {
    return { params: params ?? 'none', notification: ctx.isNotification };
  }

  @RpcMethod('ctx.only')
  ctxOnly(@RpcCtx() ctx: RpcContext) {
    return { method: ctx.method, id: ctx.id, params: ctx.params, isNotification: ctx.isNotification, requestId: typeof ctx.requestId };
  }
}

@Module({ imports: [JsonRpcModule.forRoot()], providers: [ParamMethods] })
class ParamsModule {}

@Injectable()
class LenientMethods {
  @RpcMethod('lenient.add')
  add(p: AddDto) {
    return p.a + p.b;
  }

  @RpcMethod('lenient.named')
  named(@RpcParam('a') a: number) {
    return a;
  }

  @RpcMethod('strict.add', { rejectUnknown: true })
  strictAdd(p: AddDto) {
    return p.a + p.b;
  }
}

@Module({ imports: [JsonRpcModule.forRoot({ params: { rejectUnknown: false } })], providers: [LenientMethods] })
class LenientModule {}

const call = (method: string, params?: unknown, id: unknown = 1) =>
  params === undefined ? { jsonrpc: '2.0', method, id } : { jsonrpc: '2.0', method, params, id };

const invalidParams = (id: unknown, message: string, data?: unknown) => ({
  jsonrpc: '2.0',
  error: data === undefined ? { code: -32602, message } : { code: -32602, message, data },
  id,
});

describe('params (strict module defaults)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(ParamsModule);
  });
  afterAll(() => t.close());

  const expectBody = async (request: unknown, expected: unknown) => {
    const res = await t.rpc(request);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(expected);
  };

  describe('DTO binding', () => {
    it('an undecorated (params: Dto, ctx) handler gets a validated DTO instance and the context', async () => {
      await expectBody(call('dto.undecorated', { a: 2, b: 3 }, 7), {
        jsonrpc: '2.0', result: { isDto: true, sum: 5, method: 'dto.undecorated', id: 7 }, id: 7,
      });
    });

    it('@RpcParams() binds the whole params object wherever it sits, next to @RpcCtx()', async () => {
      await expectBody(call('dto.decorated', { a: 10, b: -4 }), {
        jsonrpc: '2.0', result: { isDto: true, sum: 6, method: 'dto.decorated' }, id: 1,
      });
    });

    it('violations -> -32602 "Invalid params" with path, class-validator message and constraint name', async () => {
      await expectBody(call('dto.undecorated', { a: 'x', b: 1.5 }), invalidParams(1, 'Invalid params', [
        { path: 'a', message: 'a must be an integer number', code: 'isInt' },
        { path: 'b', message: 'b must be an integer number', code: 'isInt' },
      ]));
    });

    it('missing params on a DTO method are validated as an empty object', async () => {
      await expectBody(call('dto.undecorated'), invalidParams(1, 'Invalid params', [
        { path: 'a', message: 'a must be an integer number', code: 'isInt' },
        { path: 'b', message: 'b must be an integer number', code: 'isInt' },
      ]));
    });

    it('unknown keys -> -32602 with {path, message: "Unknown parameter", code: null}', async () => {
      await expectBody(call('dto.undecorated', { a: 1, b: 2, c: 3 }), invalidParams(1, 'Invalid params', [
        { path: 'c', message: 'Unknown parameter', code: null },
      ]));
    });

    it('per-method rejectUnknown:false accepts unknown keys (they stay on the DTO, as with a plain ValidationPipe)', async () => {
      await expectBody(call('dto.lenient', { a: 1, b: 2, extra: true }), {
        jsonrpc: '2.0', result: { keys: ['a', 'b', 'extra'], sum: 3 }, id: 1,
      });
    });

    it('nested violations have dotted paths: address.city, items.0.qty', async () => {
      await expectBody(
        call('user.update', { email: 'not-an-email', address: { city: 'X' }, items: [{ sku: 'a', qty: 0 }, { sku: 'b', qty: 2 }] }),
        invalidParams(1, 'Invalid params', [
          { path: 'email', message: 'email must be an email', code: 'isEmail' },
          { path: 'address.city', message: 'city must be longer than or equal to 2 characters', code: 'minLength' },
          { path: 'items.0.qty', message: 'qty must not be less than 1', code: 'min' },
        ]),
      );
    });

    it('an unknown key inside a nested DTO is reported with its dotted path', async () => {
      await expectBody(
        call('user.update', { email: 'a@b.example', address: { city: 'Paris', zip: '75001' } }),
        invalidParams(1, 'Invalid params', [{ path: 'address.zip', message: 'Unknown parameter', code: null }]),
      );
    });

    it('hostile nesting inside a DTO property is -32602 "nested too deeply", not an internal error', async () => {
      const deep = '{"x":'.repeat(20_000) + '1' + '}'.repeat(20_000);
      const body = `{"jsonrpc":"2.0","method":"user.update","params":{"email":"a@b.co","address":${deep}},"id":9}`;
      const res = await t.rpc(body);
      expect(res.body).toEqual({
        jsonrpc: '2.0',
        error: { code: -32602, message: 'Invalid params', data: [{ path: null, message: 'Params are nested too deeply', code: 'maxDepth' }] },
        id: 9,
      });
      expect(t.logger.text('error')).toBe('');
    });

    it('a valid nested DTO binds nested instances', async () => {
      await expectBody(call('user.update', { email: 'a@b.example', address: { city: 'Paris' }, items: [{ sku: 'a', qty: 1 }] }), {
        jsonrpc: '2.0', result: { email: 'a@b.example', city: 'Paris', addressIsDto: true, items: 1 }, id: 1,
      });
    });

    it('a DTO method given an array -> -32602 "Method \\"<name>\\" requires named parameters"', async () => {
      await expectBody(call('dto.undecorated', [1, 2], 'p'), invalidParams('p', 'Method "dto.undecorated" requires named parameters'));
      await expectBody(call('user.update', []), invalidParams(1, 'Method "user.update" requires named parameters'));
    });

    it('allowPositional maps array items onto DTO properties in declaration order', async () => {
      await expectBody(call('point.positional', [3, 4, 'home']), {
        jsonrpc: '2.0', result: { isDto: true, x: 3, y: 4, label: 'home' }, id: 1,
      });
      await expectBody(call('point.positional', [3, 4]), { jsonrpc: '2.0', result: { isDto: true, x: 3, y: 4 }, id: 1 });
      // Named params still work on a positional-capable method.
      await expectBody(call('point.positional', { y: 1, x: 2 }), { jsonrpc: '2.0', result: { isDto: true, x: 2, y: 1 }, id: 1 });
    });

    it('allowPositional validates items under their property names, and rejects surplus items', async () => {
      await expectBody(call('point.positional', [3, 'four']), invalidParams(1, 'Invalid params', [
        { path: 'y', message: 'y must be an integer number', code: 'isInt' },
      ]));
      await expectBody(call('point.positional', [1, 2, 'a', 'surplus']), invalidParams(1, 'Invalid params', [
        { path: '3', message: 'Unknown parameter', code: null },
      ]));
    });
  });

  describe('@RpcParam', () => {
    it('named: each @RpcParam takes its key', async () => {
      await expectBody(call('named.subtract', { subtrahend: 23, minuend: 42 }), { jsonrpc: '2.0', result: 19, id: 1 });
    });

    it('positional: the i-th @RpcParam takes item i', async () => {
      await expectBody(call('named.subtract', [42, 23]), { jsonrpc: '2.0', result: 19, id: 1 });
      await expectBody(call('named.subtract', [23, 42]), { jsonrpc: '2.0', result: -19, id: 1 });
    });

    it('a missing required @RpcParam -> -32602 Missing required parameter "<name>"', async () => {
      await expectBody(call('named.subtract', { minuend: 1 }), invalidParams(1, 'Missing required parameter "subtrahend"', [
        { path: 'subtrahend', message: 'Missing required parameter "subtrahend"', code: 'isDefined' },
      ]));
      await expectBody(call('named.subtract', [1]), invalidParams(1, 'Missing required parameter "subtrahend"', [
        { path: 'subtrahend', message: 'Missing required parameter "subtrahend"', code: 'isDefined' },
      ]));
      await expectBody(call('named.subtract'), invalidParams(1, 'Missing required parameter "minuend"', [
        { path: 'minuend', message: 'Missing required parameter "minuend"', code: 'isDefined' },
        { path: 'subtrahend', message: 'Missing required parameter "subtrahend"', code: 'isDefined' },
      ]));
    });

    it('a value of the wrong primitive type -> -32602 naming the param', async () => {
      await expectBody(call('named.subtract', { minuend: '42', subtrahend: 23 }), invalidParams(1, 'Parameter "minuend" must be a number', [
        { path: 'minuend', message: 'Parameter "minuend" must be a number', code: 'isNumber' },
      ]));
      await expectBody(call('named.subtract', [42, null]), invalidParams(1, 'Parameter "subtrahend" must be a number', [
        { path: 'subtrahend', message: 'Parameter "subtrahend" must be a number', code: 'isNumber' },
      ]));
      await expectBody(call('named.types', { n: 1, s: 2, b: 'yes', list: {} }), invalidParams(1, 'Parameter "s" must be a string', [
        { path: 's', message: 'Parameter "s" must be a string', code: 'isString' },
        { path: 'b', message: 'Parameter "b" must be a boolean', code: 'isBoolean' },
        { path: 'list', message: 'Parameter "list" must be an array', code: 'isArray' },
      ]));
      await expectBody(call('named.types', { n: 1, s: 's', b: false, list: ['x'] }), { jsonrpc: '2.0', result: [1, 's', false, ['x']], id: 1 });
    });

    it('unknown named keys -> "Unknown parameter"; surplus positional items are rejected', async () => {
      await expectBody(call('named.subtract', { minuend: 2, subtrahend: 1, factor: 3 }), invalidParams(1, 'Invalid params', [
        { path: 'factor', message: 'Unknown parameter', code: null },
      ]));
      await expectBody(call('named.subtract', [3, 2, 1]), invalidParams(1, 'Invalid params', [
        { path: null, message: 'Too many parameters: expected at most 2', code: null },
      ]));
    });

    it('optional and default params, and @RpcCtx() among them', async () => {
      await expectBody(call('named.greet', { name: 'Ada' }), {
        jsonrpc: '2.0', result: { text: 'Hello, Ada', shout: 'absent', ctxIsRpcContext: true }, id: 1,
      });
      await expectBody(call('named.greet', ['Ada', 'Hi', true]), {
        jsonrpc: '2.0', result: { text: 'HI, ADA', shout: true, ctxIsRpcContext: true }, id: 1,
      });
      await expectBody(call('named.greet', { name: 'Ada', shout: 'loud' }), invalidParams(1, 'Parameter "shout" must be a boolean', [
        { path: 'shout', message: 'Parameter "shout" must be a boolean', code: 'isBoolean' },
      ]));
    });

    it('a DTO-typed @RpcParam is bound and validated with paths under its key', async () => {
      await expectBody(call('named.nested', { id: 1, address: { city: 'Oslo' } }), {
        jsonrpc: '2.0', result: { id: 1, city: 'Oslo', isDto: true }, id: 1,
      });
      await expectBody(call('named.nested', { id: 1, address: { city: 5 } }), invalidParams(1, 'Invalid params', [
        { path: 'address.city', message: 'city must be longer than or equal to 2 characters', code: 'minLength' },
        { path: 'address.city', message: 'city must be a string', code: 'isString' },
      ]));
      await expectBody(call('named.nested', { id: 1, address: 'Oslo' }), invalidParams(1, 'Parameter "address" must be an object', [
        { path: 'address', message: 'Parameter "address" must be an object', code: 'isObject' },
      ]));
    });
  });

  describe('untyped params and @RpcCtx', () => {
    it('a handler with an untyped first parameter receives params as sent (object, array or nothing)', async () => {
      await expectBody(call('raw.any', { anything: [1, { deep: true }] }), {
        jsonrpc: '2.0', result: { params: { anything: [1, { deep: true }] }, notification: false }, id: 1,
      });
      await expectBody(call('raw.any', [1, 'two']), { jsonrpc: '2.0', result: { params: [1, 'two'], notification: false }, id: 1 });
      await expectBody(call('raw.any'), { jsonrpc: '2.0', result: { params: 'none', notification: false }, id: 1 });
    });

    it('@RpcCtx() exposes method, id, params, isNotification and requestId', async () => {
      await expectBody(call('ctx.only', undefined, 'abc'), {
        jsonrpc: '2.0', result: { method: 'ctx.only', id: 'abc', isNotification: false, requestId: 'string' }, id: 'abc',
      });
    });
  });
});

describe('params (module-level params.rejectUnknown: false)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(LenientModule);
  });
  afterAll(() => t.close());

  it('unknown keys are accepted by DTO and @RpcParam methods', async () => {
    expect((await t.rpc(call('lenient.add', { a: 1, b: 2, c: 3 }))).body).toEqual({ jsonrpc: '2.0', result: 3, id: 1 });
    expect((await t.rpc(call('lenient.named', { a: 1, zzz: 3 }))).body).toEqual({ jsonrpc: '2.0', result: 1, id: 1 });
    expect((await t.rpc(call('lenient.named', [5, 6, 7]))).body).toEqual({ jsonrpc: '2.0', result: 5, id: 1 });
  });

  it('a method can opt back into rejecting unknown keys', async () => {
    expect((await t.rpc(call('strict.add', { a: 1, b: 2, c: 3 }))).body).toEqual(
      invalidParams(1, 'Invalid params', [{ path: 'c', message: 'Unknown parameter', code: null }]),
    );
  });
});
