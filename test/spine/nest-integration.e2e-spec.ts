/**
 * The Nest integration points users expect, over HTTP: custom parameter
 * decorators (`createParamDecorator`) on plain, batched and stream calls; `RpcContext<TUser>`;
 * `forRootAsync` with `useClass` and `useExisting`; a replaced `RpcExceptionMapper`; and error codes
 * that are integers whatever a handler or a mapper tries.
 */
import {
  ConflictException,
  createParamDecorator,
  Injectable,
  Module,
  type CanActivate,
  type ExecutionContext,
  type HttpException,
  UseGuards,
} from '@nestjs/common';
import { IsInt } from 'class-validator';
import {
  JsonRpcModule,
  RpcContext,
  RpcCtx,
  RpcException,
  RpcExceptionMapper,
  RpcMethod,
  RpcParam,
  RpcParams,
  RpcStream,
  StreamFormat,
  type JsonRpcModuleOptions,
  type JsonRpcOptionsFactory,
  type RpcErrorObject,
} from '@nest-jsonrpc/server';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';

interface AppUser {
  id: number;
  name: string;
  roles: string[];
}

/** Sets `request.user` from `x-user` (`<id>:<name>`), as an auth guard would. */
@Injectable()
class HeaderAuthGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest();
    const header = request.headers['x-user'];
    if (typeof header === 'string') {
      const [id, name] = header.split(':');
      request.user = { id: Number(id), name, roles: ['user'] } satisfies AppUser;
    }
    return true;
  }
}

/** Controller-style custom decorators, used unchanged on RPC handlers. */
const CurrentUser = createParamDecorator((field: keyof AppUser | undefined, ctx: ExecutionContext) => {
  const user = ctx.switchToHttp().getRequest().user as AppUser | undefined;
  return field ? user?.[field] : user;
});
const RequestHeader = createParamDecorator((name: string, ctx: ExecutionContext) => ctx.switchToHttp().getRequest().headers[name]);

class GreetDto {
  @IsInt() times!: number;
}

@Injectable()
@UseGuards(HeaderAuthGuard)
class Profiles {
  @RpcMethod('me')
  me(@CurrentUser() user: AppUser | undefined, @RpcCtx() ctx: RpcContext<AppUser>) {
    // RpcContext<TUser>: ctx.user is AppUser, no cast (this file is type-checked by `npm run typecheck`).
    const id: number = ctx.user.id;
    return { user, id, transport: ctx.transport };
  }

  @RpcMethod('greet')
  greet(@RpcParams() dto: GreetDto, @CurrentUser('name') name: string, @RequestHeader('x-lang') lang: string | undefined) {
    return `${lang === 'fr' ? 'bonjour' : 'hello'} ${name} x${dto.times}`;
  }

  @RpcMethod('sum')
  sum(@RpcParam('a') a: number, @CurrentUser('id') userId: number, @RpcParam('b') b: number) {
    return { total: a + b, userId };
  }

  /** Undecorated (params, ctx) around a custom decorator. */
  @RpcMethod('echo.user')
  echoUser(params: { text: string }, @CurrentUser('name') name: string, ctx: RpcContext) {
    return `${name}: ${params.text} (${ctx.method})`;
  }

  @RpcMethod('ticks')
  @RpcStream({ format: StreamFormat.Ndjson })
  async *ticks(@RpcParam('n') n: number, @CurrentUser('name') name: string, @RpcCtx() ctx: RpcContext<AppUser>) {
    for (let i = 0; i < n; i++) yield { i, name, id: ctx.user.id, transport: ctx.transport };
  }
}

/** Maps 409 to an app code, leaves the rest to the module; logs what it mapped. */
@Injectable()
class AppExceptionMapper extends RpcExceptionMapper {
  static mapped: string[] = [];

  protected override fromHttpException(error: HttpException, method?: string): RpcErrorObject {
    if (error.getStatus() === 409) {
      AppExceptionMapper.mapped.push(`${method}: ${error.message}`);
      return { code: 4090, message: `Conflict: ${error.message}`, data: { method } };
    }
    return super.fromHttpException(error, method);
  }

  protected override map(error: unknown, method?: string): RpcErrorObject {
    // A broken mapping (a code that is not an integer) must never reach the wire.
    if (error instanceof Error && error.message === 'map me badly') return { code: 1.5, message: 'bad' };
    return super.map(error, method);
  }
}

@Injectable()
class Troubles {
  @RpcMethod('conflict')
  conflict() {
    throw new ConflictException('already there');
  }

  @RpcMethod('badly.mapped')
  badlyMapped() {
    throw new Error('map me badly');
  }

  @RpcMethod('bad.code')
  badCode(@RpcParam('code') code: string) {
    const codes: Record<string, number> = { nan: Number.NaN, infinity: Number.POSITIVE_INFINITY, fraction: 1.5 };
    throw new RpcException('never sent', { code: codes[code] });
  }

  @RpcMethod('bad.code.stream')
  @RpcStream()
  async *badCodeStream() {
    yield { ok: true };
    throw new RpcException('never sent', { code: Number.NaN });
  }
}

@Module({ providers: [Profiles, Troubles] })
class FeatureModule {}

const call = (method: string, params?: unknown, id: number | string = 1) => (params === undefined ? { jsonrpc: '2.0', method, id } : { jsonrpc: '2.0', method, params, id });

describe('custom parameter decorators (createParamDecorator) on RPC handlers', () => {
  let t: TestApp;
  beforeAll(async () => {
    @Module({ imports: [JsonRpcModule.forRoot({ stream: { enabled: true } }), FeatureModule] })
    class AppModule {}
    t = await startTestApp(AppModule);
  });
  afterAll(() => t.close());
  const as = (user: string, extra: Record<string, string> = {}) => ({ headers: { 'x-user': user, ...extra } });

  it('receive what they read from the Fastify request, beside @RpcCtx; RpcContext<TUser> types ctx.user', async () => {
    expect((await t.rpc(call('me'), as('7:ada'))).body).toEqual({
      jsonrpc: '2.0', result: { user: { id: 7, name: 'ada', roles: ['user'] }, id: 7, transport: 'http' }, id: 1,
    });
  });

  it('mix with @RpcParams (validated DTO), @RpcParam (named and positional) and undecorated (params, ctx)', async () => {
    expect((await t.rpc(call('greet', { times: 2 }), as('1:bob', { 'x-lang': 'fr' }))).body.result).toBe('bonjour bob x2');
    expect((await t.rpc(call('sum', { a: 2, b: 3 }), as('9:cy'))).body.result).toEqual({ total: 5, userId: 9 });
    // Positional: the custom decorator takes no position, so [2, 3] are a and b.
    expect((await t.rpc(call('sum', [2, 3]), as('9:cy'))).body.result).toEqual({ total: 5, userId: 9 });
    expect((await t.rpc(call('echo.user', { text: 'hi' }), as('4:dee'))).body.result).toBe('dee: hi (echo.user)');
  });

  it('claim no params key: unknown keys are still rejected, and DTO validation still applies', async () => {
    expect((await t.rpc(call('sum', { a: 1, b: 2, id: 5 }), as('9:cy'))).body.error).toEqual({
      code: -32602, message: 'Invalid params', data: [{ path: 'id', message: 'Unknown parameter', code: null }],
    });
    expect((await t.rpc(call('greet', { times: 'x', name: 'eve' }), as('1:bob'))).body.error).toEqual({
      code: -32602,
      message: 'Invalid params',
      data: [
        { path: 'name', message: 'Unknown parameter', code: null },
        { path: 'times', message: 'times must be an integer number', code: 'isInt' },
      ],
    });
  });

  it('work on every item of a batch, each with the request the batch came in', async () => {
    const res = await t.rpc([call('me', undefined, 'a'), call('sum', { a: 1, b: 1 }, 'b'), call('greet', { times: 1 }, 'c')], as('3:fay'));
    expect(res.body).toEqual([
      { jsonrpc: '2.0', result: { user: { id: 3, name: 'fay', roles: ['user'] }, id: 3, transport: 'http' }, id: 'a' },
      { jsonrpc: '2.0', result: { total: 2, userId: 3 }, id: 'b' },
      { jsonrpc: '2.0', result: 'hello fay x1', id: 'c' },
    ]);
  });

  it('work on stream calls (transport "stream")', async () => {
    const res = await t.post(call('ticks', { n: 2 }), { path: '/rpc/stream', ...as('5:gil') });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(
      '{"i":0,"name":"gil","id":5,"transport":"stream"}\n{"i":1,"name":"gil","id":5,"transport":"stream"}\n',
    );
  });
});

// ---- forRootAsync: useClass and useExisting ----------------------------------------------------

@Injectable()
class ClassOptions implements JsonRpcOptionsFactory {
  createJsonRpcOptions(): JsonRpcModuleOptions {
    return { path: '/from-class', maxBatchSize: 2, stream: { enabled: true } };
  }
}

@Injectable()
class ExistingOptions implements JsonRpcOptionsFactory {
  async createJsonRpcOptions(): Promise<JsonRpcModuleOptions> {
    await new Promise((resolve) => setTimeout(resolve, 5));
    return { path: '/from-existing', stream: { enabled: true } };
  }
}

@Module({ providers: [ExistingOptions], exports: [ExistingOptions] })
class OptionsModule {}

describe('JsonRpcModule.forRootAsync', () => {
  it('useClass: the module instantiates the factory and calls createJsonRpcOptions()', async () => {
    @Module({ imports: [JsonRpcModule.forRootAsync({ useClass: ClassOptions }), FeatureModule] })
    class AppModule {}
    const t = await startTestApp(AppModule);
    try {
      expect((await t.rpc(call('sum', { a: 1, b: 2 }), { path: '/from-class', headers: { 'x-user': '1:a' } })).body.result).toEqual({ total: 3, userId: 1 });
      expect((await t.rpc([call('me'), call('me'), call('me')], { path: '/from-class' })).body.error.message).toBe('Invalid Request: batch of 3 exceeds the limit of 2');
      expect((await t.post(call('me'))).status).toBe(404);
    } finally {
      await t.close();
    }
  });

  it("useExisting: the app's own provider (from imports) gives the options", async () => {
    @Module({ imports: [JsonRpcModule.forRootAsync({ imports: [OptionsModule], useExisting: ExistingOptions }), FeatureModule, OptionsModule] })
    class AppModule {}
    const t = await startTestApp(AppModule);
    try {
      expect((await t.rpc(call('sum', { a: 2, b: 2 }), { path: '/from-existing', headers: { 'x-user': '2:b' } })).body.result).toEqual({ total: 4, userId: 2 });
    } finally {
      await t.close();
    }
  });

  it('refuses a call with none, or more than one, of useFactory, useClass and useExisting', () => {
    expect(() => JsonRpcModule.forRootAsync({})).toThrow('JsonRpcModule.forRootAsync needs exactly one of useFactory, useClass or useExisting');
    expect(() => JsonRpcModule.forRootAsync({ useClass: ClassOptions, useExisting: ExistingOptions })).toThrow(/exactly one/);
  });
});

// ---- a replaced exception mapper, integer codes ----------------------------------------------------

describe('RpcExceptionMapper replaced by the app, and error codes that are integers whatever happens', () => {
  let t: TestApp;
  beforeAll(async () => {
    AppExceptionMapper.mapped = [];
    @Module({ imports: [JsonRpcModule.forRoot({ stream: { enabled: true }, exceptionMapper: AppExceptionMapper }), FeatureModule] })
    class AppModule {}
    t = await startTestApp(AppModule);
  });
  afterAll(() => t.close());

  it('the subclass maps what its hooks cover, on /rpc and in batches', async () => {
    expect((await t.rpc(call('conflict'))).body.error).toEqual({ code: 4090, message: 'Conflict: already there', data: { method: 'conflict' } });
    expect((await t.rpc([call('conflict', undefined, 1), call('me', undefined, 2)])).body[0].error.code).toBe(4090);
    // The mapper is stateless: the call observer (on by default: logCalls 'errors') learns the code
    // with mapError and the transport maps again to answer, so a hook runs once or twice per failure.
    expect(AppExceptionMapper.mapped.length).toBeGreaterThanOrEqual(2);
    expect(new Set(AppExceptionMapper.mapped)).toEqual(new Set(['conflict: already there']));
  });

  it('the module defaults still apply to what the subclass leaves alone', async () => {
    expect((await t.rpc(call('sum', { a: 'x', b: 1 }))).body.error.code).toBe(-32602);
  });

  it('a mapping to a non-integer code answers -32603 and is logged, never sent', async () => {
    const res = await t.rpc(call('badly.mapped'));
    expect(res.body).toEqual({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: 1 });
    expect(t.logger.text('error')).toContain('the exception mapper produced an invalid error object (code 1.5)');
  });

  it.each([
    ['nan', 'NaN'],
    ['infinity', 'Infinity'],
    ['fraction', '1.5'],
  ])('an RpcException with code %s fails at construction: -32603, the TypeError logged', async (code, shown) => {
    const res = await t.post(call('bad.code', { code }));
    expect(res.status).toBe(200);
    // Valid JSON with an integer code (a NaN would have made the body invalid JSON).
    expect(JSON.parse(await res.text())).toEqual({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: 1 });
    expect(t.logger.text('error')).toContain(`RpcException code must be an integer, got ${shown}`);
  });

  it('a stream whose producer throws such an exception ends with a -32603 error frame', async () => {
    const res = await t.post(call('bad.code.stream'), { path: '/rpc/stream' });
    expect(await res.text()).toBe('{"ok":true}\n{"error":{"code":-32603,"message":"Internal error"}}\n');
  });
});
