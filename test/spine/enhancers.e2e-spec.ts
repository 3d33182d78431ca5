/**
 * Every call goes through Nest's own enhancer chain: guards, interceptors,
 * pipes and filters on the method, its class, or global (app.useGlobal* and APP_* providers);
 * a batch item is a call; the platform's request is what switchToHttp() returns; getRpcContext()
 * exposes the call; request-scoped providers get one instance per HTTP request; the fast path
 * (no enhancers) bypasses the chain.
 */
import {
  ArgumentMetadata,
  Catch,
  Controller,
  ExceptionFilter,
  ArgumentsHost,
  ExecutionContext,
  ForbiddenException,
  Get,
  Inject,
  Injectable,
  Module,
  NestInterceptor,
  CallHandler,
  PipeTransform,
  Scope,
  UnauthorizedException,
  UseFilters,
  UseGuards,
  UseInterceptors,
  UsePipes,
  ValidationPipe,
  BadRequestException,
  ClassSerializerInterceptor,
  type CanActivate,
  type HttpServer,
} from '@nestjs/common';
import { jest } from '@jest/globals';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR, APP_PIPE, ExternalContextCreator, REQUEST, Reflector } from '@nestjs/core';
import { CacheInterceptor, CacheModule } from '@nestjs/cache-manager';
import { Exclude } from 'class-transformer';
import { IsInt } from 'class-validator';
import { map, of, throwError, type Observable } from 'rxjs';
import {
  getRpcContext,
  JsonRpcModule,
  MemoryStreamStore,
  RpcContext,
  RpcCtx,
  RpcMethod,
  RpcNotFoundException,
  RpcParam,
  RpcParams,
  RpcStream,
  StreamFormat,
} from '@nest-jsonrpc/server';
import { startTestApp, TEST_PLATFORM, type TestApp } from '../support/rpc-test-app.js';

/** Fastify's request (with `raw` and `routeOptions`), or Express's (with `get()` and `app`), as the platform of this run gives it. */
function isPlatformRequest(request: any): boolean {
  if (TEST_PLATFORM === 'fastify') return typeof request.raw === 'object' && typeof request.routeOptions === 'object';
  return typeof request.get === 'function' && typeof request.app === 'function';
}

/** Fastify's reply (`code()`), or Express's response (`status()`, `json()`). */
function isPlatformReply(reply: any): boolean {
  if (TEST_PLATFORM === 'fastify') return typeof reply.code === 'function';
  return typeof reply.status === 'function' && typeof reply.json === 'function';
}

/** What enhancers saw, in order. Shared by every test app of this file (reset per test). */
const seen: Array<Record<string, unknown>> = [];

class DomainError extends Error {}

@Injectable()
class ApiKeyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest();
    const call = getRpcContext(context);
    seen.push({
      by: 'ApiKeyGuard',
      type: context.getType(),
      // The platform's own request and reply (Fastify's, or Express's), not the raw Node ones.
      platformRequest: isPlatformRequest(request),
      platformReply: isPlatformReply(context.switchToHttp().getResponse()),
      handler: context.getHandler().name,
      class: context.getClass().name,
      call: call && { method: call.method, id: call.id, params: call.params, isNotification: call.isNotification },
    });
    return request.headers['x-api-key'] === 'let-me-in';
  }
}

@Injectable()
class ThrowingGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const mode = context.switchToHttp().getRequest().headers['x-guard-mode'];
    if (mode === 'unauthorized') throw new UnauthorizedException();
    if (mode === 'forbidden-with-reason') throw new ForbiddenException('Admins only');
    return true;
  }
}

@Injectable()
class WrapInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const call = getRpcContext(context);
    if (!call) return next.handle();
    seen.push({ by: 'WrapInterceptor', method: call.method });
    return next.handle().pipe(map((result) => ({ wrapped: result, by: call.method })));
  }
}

@Injectable()
class UpperCasePipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata) {
    if (metadata.type !== 'custom') return value;
    seen.push({ by: 'UpperCasePipe', metatype: (metadata.metatype as { name?: string } | undefined)?.name, type: metadata.type });
    return typeof value === 'string' ? value.toUpperCase() : value;
  }
}

@Injectable()
class RejectNegativePipe implements PipeTransform {
  transform(value: unknown) {
    if (typeof value === 'number' && value < 0) throw new BadRequestException('value must not be negative');
    return value;
  }
}

@Catch(DomainError)
class DomainErrorFilter implements ExceptionFilter {
  catch(exception: DomainError, host: ArgumentsHost) {
    const call = getRpcContext(host as ExecutionContext);
    seen.push({ by: 'DomainErrorFilter', method: call?.method });
    // The microservice style: answer with an error Observable.
    return throwError(() => new RpcNotFoundException(`Not found: ${exception.message}`, { data: { via: 'filter' } }));
  }
}

@Catch(DomainError)
class RecoveringFilter implements ExceptionFilter {
  catch(exception: DomainError) {
    return of({ recovered: exception.message });
  }
}

@UseGuards(ApiKeyGuard)
@Injectable()
class GuardedByClass {
  @RpcMethod('class.guarded')
  guarded(@RpcParam('x') x: number) {
    return x * 2;
  }
}

@Injectable()
class LocalEnhancers {
  calls = 0;

  @RpcMethod('method.guarded')
  @UseGuards(ApiKeyGuard)
  guarded(@RpcParam('x') x: number) {
    this.calls++;
    return x + 1;
  }

  @RpcMethod('method.throwing-guard')
  @UseGuards(ThrowingGuard)
  throwingGuard() {
    return 'passed';
  }

  @RpcMethod('method.intercepted')
  @UseInterceptors(WrapInterceptor)
  intercepted(@RpcParam('x') x: number) {
    return x;
  }

  @RpcMethod('method.piped')
  @UsePipes(UpperCasePipe)
  piped(@RpcParam('word') word: string, @RpcCtx() ctx: RpcContext) {
    return { word, ctxSurvives: ctx instanceof RpcContext };
  }

  @RpcMethod('method.rejecting-pipe')
  @UsePipes(RejectNegativePipe)
  rejectingPipe(@RpcParam('n') n: number) {
    return n;
  }

  @RpcMethod('method.filtered')
  @UseFilters(DomainErrorFilter)
  filtered(@RpcParam('what') what: string) {
    throw new DomainError(what);
  }

  @RpcMethod('method.recovered')
  @UseFilters(RecoveringFilter)
  recovered() {
    throw new DomainError('oops');
  }

  @RpcMethod('method.filter-passes-others')
  @UseFilters(DomainErrorFilter)
  filterPassesOthers() {
    throw new RpcNotFoundException('Untouched');
  }

  @RpcMethod('method.plain')
  plain() {
    return 'no enhancers';
  }

  @RpcMethod('method.async-intercepted')
  @UseInterceptors(WrapInterceptor)
  async asyncIntercepted() {
    await new Promise((r) => setTimeout(r, 2));
    return of('observable-last');
  }
}

@UseInterceptors(WrapInterceptor)
@UseFilters(DomainErrorFilter)
@Injectable()
class ClassLevelEnhancers {
  @RpcMethod('class.intercepted')
  intercepted() {
    return 'inner';
  }

  @RpcMethod('class.filtered')
  filtered() {
    throw new DomainError('from class');
  }
}

@Module({
  imports: [JsonRpcModule.forRoot()],
  providers: [GuardedByClass, LocalEnhancers, ClassLevelEnhancers],
})
class LocalModule {}

const call = (method: string, params?: unknown, id: unknown = 1) =>
  params === undefined ? { jsonrpc: '2.0', method, id } : { jsonrpc: '2.0', method, params, id };
const ok = (result: unknown, id: unknown = 1) => ({ jsonrpc: '2.0', result, id });
const err = (error: unknown, id: unknown = 1) => ({ jsonrpc: '2.0', error, id });
const DENIED = { code: -32001, message: 'Access denied' };
const KEY = { headers: { 'x-api-key': 'let-me-in' } };

describe('enhancers on methods and classes', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(LocalModule);
  });
  afterAll(() => t.close());
  beforeEach(() => {
    seen.length = 0;
  });

  it("a method guard sees the platform's request (headers) and the call through getRpcContext()", async () => {
    expect((await t.rpc(call('method.guarded', { x: 1 }, 'g1'), KEY)).body).toEqual(ok(2, 'g1'));
    expect(seen).toEqual([
      {
        by: 'ApiKeyGuard',
        type: 'http',
        platformRequest: true,
        platformReply: true,
        handler: 'guarded',
        class: 'LocalEnhancers',
        call: { method: 'method.guarded', id: 'g1', params: { x: 1 }, isNotification: false },
      },
    ]);
  });

  it('a guard returning false -> -32001 "Access denied", and the handler does not run', async () => {
    const methods = t.app.get(LocalEnhancers);
    const before = methods.calls;
    const res = await t.rpc(call('method.guarded', { x: 1 }));
    expect(res.status).toBe(200);
    expect(res.body).toEqual(err(DENIED));
    expect(methods.calls).toBe(before);
  });

  it('a guard on the class applies to its methods', async () => {
    expect((await t.rpc(call('class.guarded', { x: 21 }))).body).toEqual(err(DENIED));
    expect((await t.rpc(call('class.guarded', { x: 21 }), KEY)).body).toEqual(ok(42));
  });

  it('guards throwing Unauthorized/Forbidden -> -32001, with the exception\'s own message when it has one', async () => {
    expect((await t.rpc(call('method.throwing-guard'), { headers: { 'x-guard-mode': 'unauthorized' } })).body).toEqual(err(DENIED));
    expect((await t.rpc(call('method.throwing-guard'), { headers: { 'x-guard-mode': 'forbidden-with-reason' } })).body).toEqual(
      err({ code: -32001, message: 'Admins only' }),
    );
    expect((await t.rpc(call('method.throwing-guard'))).body).toEqual(ok('passed'));
  });

  it('each batch item is its own call: the guard runs per item and denies only where it should', async () => {
    const res = await t.rpc(
      [call('method.guarded', { x: 1 }, 1), call('method.intercepted', { x: 5 }, 2), call('class.guarded', { x: 2 }, 3)],
      { headers: { 'x-api-key': 'wrong' } },
    );
    expect(res.body).toEqual([err(DENIED, 1), ok({ wrapped: 5, by: 'method.intercepted' }, 2), err(DENIED, 3)]);
    expect(seen.filter((s) => s.by === 'ApiKeyGuard').map((s) => (s.call as { id: unknown }).id)).toEqual([1, 3]);
  });

  it('a notification denied by a guard gets no answer; getRpcContext says isNotification', async () => {
    const res = await t.post({ jsonrpc: '2.0', method: 'method.guarded', params: { x: 1 } });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');
    expect((seen[0].call as { isNotification: boolean; id: unknown }).isNotification).toBe(true);
    expect((seen[0].call as { id: unknown }).id).toBeUndefined();
  });

  it('a method interceptor wraps the result; a class interceptor too', async () => {
    expect((await t.rpc(call('method.intercepted', { x: 3 }))).body).toEqual(ok({ wrapped: 3, by: 'method.intercepted' }));
    expect((await t.rpc(call('class.intercepted'))).body).toEqual(ok({ wrapped: 'inner', by: 'class.intercepted' }));
  });

  it('an interceptor sees the settled value of an async handler returning an Observable', async () => {
    expect((await t.rpc(call('method.async-intercepted'))).body).toEqual(ok({ wrapped: 'observable-last', by: 'method.async-intercepted' }));
  });

  it('a method pipe transforms each argument (with its metatype; "custom" type); @RpcCtx survives, and reaches pipes with no metatype', async () => {
    expect((await t.rpc(call('method.piped', { word: 'quiet' }))).body).toEqual(ok({ word: 'QUIET', ctxSurvives: true }));
    expect(seen).toEqual([
      { by: 'UpperCasePipe', metatype: 'String', type: 'custom' },
      // No metatype: a ValidationPipe with validateCustomDecorators would otherwise validate (and copy) the context.
      { by: 'UpperCasePipe', metatype: undefined, type: 'custom' },
    ]);
  });

  it('a pipe throwing BadRequestException -> -32602 with its message as data', async () => {
    expect((await t.rpc(call('method.rejecting-pipe', { n: -1 }))).body).toEqual(
      err({ code: -32602, message: 'Invalid params', data: [{ path: null, message: 'value must not be negative', code: null }] }),
    );
    expect((await t.rpc(call('method.rejecting-pipe', [4]))).body).toEqual(ok(4));
  });

  it('params are validated before pipes run: invalid params never reach the pipe', async () => {
    expect((await t.rpc(call('method.piped', { word: 5 }))).body).toEqual(
      err({ code: -32602, message: 'Parameter "word" must be a string', data: [{ path: 'word', message: 'Parameter "word" must be a string', code: 'isString' }] }),
    );
  });

  it('a method filter catches its exception and answers with the RpcException it returns', async () => {
    expect((await t.rpc(call('method.filtered', { what: 'invoice 7' }))).body).toEqual(
      err({ code: -32002, message: 'Not found: invoice 7', data: { via: 'filter' } }),
    );
    expect(seen).toEqual([{ by: 'DomainErrorFilter', method: 'method.filtered' }]);
  });

  it('a filter may recover with a value; a filter does not catch what it does not @Catch', async () => {
    expect((await t.rpc(call('method.recovered'))).body).toEqual(ok({ recovered: 'oops' }));
    expect((await t.rpc(call('method.filter-passes-others'))).body).toEqual(err({ code: -32002, message: 'Untouched' }));
  });

  it('a class filter applies to its methods', async () => {
    expect((await t.rpc(call('class.filtered'))).body).toEqual(err({ code: -32002, message: 'Not found: from class', data: { via: 'filter' } }));
  });
});

// ---------------------------------------------------------------------------------------------

class CountDto {
  @IsInt() count!: number;
}

@Injectable()
class GlobalMethods {
  @RpcMethod('global.echo')
  echo(@RpcParam('word') word: string) {
    return word;
  }

  @RpcMethod('global.domain-error')
  domainError() {
    throw new DomainError('global');
  }

  @RpcMethod('global.ctx')
  ctx(@RpcCtx() ctx: RpcContext, @RpcParams() dto: CountDto) {
    return { method: ctx.method, count: dto.count };
  }
}

@Controller('plain')
class PlainController {
  @Get()
  get() {
    return { plain: true };
  }
}

@Injectable()
class RecordingGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const rpc = getRpcContext(context);
    seen.push({ by: 'RecordingGuard', rpc: rpc ? rpc.method : 'not an rpc call' });
    return context.switchToHttp().getRequest().headers['x-deny'] === undefined;
  }
}

@Module({ imports: [JsonRpcModule.forRoot()], providers: [GlobalMethods], controllers: [PlainController] })
class GlobalUseModule {}

describe('global enhancers registered with app.useGlobal*()', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(GlobalUseModule, (app) => {
      app.useGlobalGuards(new RecordingGuard());
      app.useGlobalInterceptors(new WrapInterceptor());
      app.useGlobalPipes(new UpperCasePipe(), new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true }));
      app.useGlobalFilters(new DomainErrorFilter());
    });
  });
  afterAll(() => t.close());
  beforeEach(() => {
    seen.length = 0;
  });

  it('apply to every call, in Nest order: guard, interceptor, pipe', async () => {
    expect((await t.rpc(call('global.echo', { word: 'hi' }))).body).toEqual(ok({ wrapped: 'HI', by: 'global.echo' }));
    expect(seen).toEqual([
      { by: 'RecordingGuard', rpc: 'global.echo' },
      { by: 'WrapInterceptor', method: 'global.echo' },
      { by: 'UpperCasePipe', metatype: 'String', type: 'custom' },
    ]);
  });

  it('a global guard denies, a global filter maps', async () => {
    expect((await t.rpc(call('global.echo', { word: 'hi' }), { headers: { 'x-deny': '1' } })).body).toEqual(err(DENIED));
    // An answer, not a fault: nothing is logged as an error.
    expect(t.logger.text('error')).toBe('');
    expect((await t.rpc(call('global.domain-error'))).body).toEqual(err({ code: -32002, message: 'Not found: global', data: { via: 'filter' } }));
  });

  it('a global ValidationPipe leaves RPC arguments alone (they are validated already)', async () => {
    expect((await t.rpc(call('global.ctx', { count: 3 }))).body).toEqual(ok({ wrapped: { method: 'global.ctx', count: 3 }, by: 'global.ctx' }));
  });

  it('each batch item passes the global guard on its own', async () => {
    await t.rpc([call('global.echo', { word: 'a' }, 1), call('global.echo', { word: 'b' }, 2)]);
    expect(seen.filter((s) => s.by === 'RecordingGuard')).toEqual([
      { by: 'RecordingGuard', rpc: 'global.echo' },
      { by: 'RecordingGuard', rpc: 'global.echo' },
    ]);
  });

  it('ordinary controllers keep working; getRpcContext() is undefined there', async () => {
    const res = await fetch(`${t.url}/plain`);
    expect(res.status).toBe(200);
    expect(seen[0]).toEqual({ by: 'RecordingGuard', rpc: 'not an rpc call' });
  });
});

// ---------------------------------------------------------------------------------------------

@Module({
  imports: [JsonRpcModule.forRoot()],
  providers: [
    GlobalMethods,
    { provide: APP_GUARD, useClass: RecordingGuard },
    { provide: APP_INTERCEPTOR, useClass: WrapInterceptor },
    { provide: APP_PIPE, useClass: UpperCasePipe },
    { provide: APP_FILTER, useClass: DomainErrorFilter },
  ],
})
class AppProvidersModule {}

describe('global enhancers provided as APP_GUARD / APP_INTERCEPTOR / APP_PIPE / APP_FILTER', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(AppProvidersModule);
  });
  afterAll(() => t.close());
  beforeEach(() => {
    seen.length = 0;
  });

  it('apply to every call', async () => {
    expect((await t.rpc(call('global.echo', { word: 'hey' }))).body).toEqual(ok({ wrapped: 'HEY', by: 'global.echo' }));
    expect(seen.map((s) => s.by)).toEqual(['RecordingGuard', 'WrapInterceptor', 'UpperCasePipe']);
    expect((await t.rpc(call('global.echo', { word: 'x' }), { headers: { 'x-deny': '1' } })).body).toEqual(err(DENIED));
    expect((await t.rpc(call('global.domain-error'))).body).toEqual(err({ code: -32002, message: 'Not found: global', data: { via: 'filter' } }));
  });
});

// ---------------------------------------------------------------------------------------------

/**
 * The app-wide "catch everything" filter of Nest's docs, written for controllers: it answers the
 * HTTP request itself. `rethrowRpc` is the documented fix: JSON-RPC calls are left to the module.
 */
@Catch()
class AllExceptionsFilter implements ExceptionFilter {
  constructor(
    private readonly rethrowRpc: boolean,
    private readonly http: HttpServer,
  ) {}
  catch(exception: unknown, host: ArgumentsHost) {
    // An ArgumentsHost is accepted as is (no cast to ExecutionContext needed).
    if (this.rethrowRpc && getRpcContext(host)) throw exception;
    // As Nest's docs write it, for any platform: the app's HTTP adapter answers.
    this.http.reply(host.switchToHttp().getResponse(), { statusCode: 500, message: 'from AllExceptionsFilter' }, 500);
  }
}

@Controller('plain-failing')
class FailingController {
  @Get()
  get() {
    throw new DomainError('controller');
  }
}

@Module({ imports: [JsonRpcModule.forRoot()], providers: [GlobalMethods], controllers: [FailingController] })
class CatchAllModule {}

describe('an app-wide @Catch() filter that writes the HTTP response itself', () => {
  const batch = [call('global.echo', { word: 'kept' }, 1), call('global.domain-error', undefined, 2), call('global.echo', { word: 'x', extra: 1 }, 3)];

  it('when it skips JSON-RPC calls (getRpcContext(host) -> rethrow), every batch item keeps its own answer', async () => {
    const t = await startTestApp(CatchAllModule, (app) => {
      app.useGlobalFilters(new AllExceptionsFilter(true, app.getHttpAdapter()));
    });
    try {
      const res = await t.rpc(batch);
      expect(res.status).toBe(200);
      expect(res.body).toEqual([
        ok('kept', 1),
        err({ code: -32603, message: 'Internal error' }, 2),
        err({ code: -32602, message: 'Invalid params', data: [{ path: 'extra', message: 'Unknown parameter', code: null }] }, 3),
      ]);
      // Controllers still get the filter's answer.
      const plain = await fetch(`${t.url}/plain-failing`);
      expect(plain.status).toBe(500);
      expect(await plain.json()).toEqual({ statusCode: 500, message: 'from AllExceptionsFilter' });
      expect(t.logger.text('warn')).toBe('');
    } finally {
      await t.close();
    }
  });

  it('when it does not, its answer stands, the module does not send twice, and says why once in the log', async () => {
    const t = await startTestApp(CatchAllModule, (app) => {
      app.useGlobalFilters(new AllExceptionsFilter(false, app.getHttpAdapter()));
    });
    try {
      for (let i = 0; i < 2; i++) {
        const res = await t.post(batch);
        expect(res.status).toBe(500);
        expect(await res.json()).toEqual({ statusCode: 500, message: 'from AllExceptionsFilter' });
      }
      const warnings = t.logger.lines.filter((l) => l.level === 'warn');
      expect(warnings).toHaveLength(1);
      expect(warnings[0].message).toContain('the JSON-RPC answer was dropped');
      expect(warnings[0].message).toContain('if (getRpcContext(host)) throw exception;');
      // The connection is still usable: a call that does not fail is answered normally.
      expect((await t.rpc(call('global.echo', { word: 'fine' }))).body).toEqual(ok('fine'));
    } finally {
      await t.close();
    }
  });
});

// ---------------------------------------------------------------------------------------------

let nextInstance = 0;

@Injectable({ scope: Scope.REQUEST })
class PerRequestState {
  readonly instance = ++nextInstance;
  constructor(@Inject(REQUEST) readonly request: { headers: Record<string, string | undefined> }) {}
}

@Injectable()
class SingletonCounter {
  static created = 0;
  constructor() {
    SingletonCounter.created++;
  }
}

/** Request-scoped implicitly, because it depends on a request-scoped provider. */
@Injectable()
class ScopedMethods {
  constructor(
    private readonly state: PerRequestState,
    private readonly singleton: SingletonCounter,
  ) {}

  @RpcMethod('scoped.whoami')
  whoami() {
    return { instance: this.state.instance, tag: this.state.request.headers['x-tag'] ?? null, singletons: SingletonCounter.created, same: this.singleton instanceof SingletonCounter };
  }
}

@Injectable({ scope: Scope.REQUEST })
class ExplicitlyScopedMethods {
  readonly instance = ++nextInstance;

  @RpcMethod('scoped.explicit')
  @UseInterceptors(WrapInterceptor)
  explicit() {
    return this.instance;
  }

  @RpcMethod('scoped.filtered')
  @UseFilters(DomainErrorFilter)
  filtered() {
    throw new DomainError(`instance ${this.instance}`);
  }
}

@Module({ imports: [JsonRpcModule.forRoot()], providers: [PerRequestState, SingletonCounter, ScopedMethods, ExplicitlyScopedMethods] })
class ScopeModule {}

describe('provider scopes', () => {
  let t: TestApp;
  beforeAll(async () => {
    SingletonCounter.created = 0;
    t = await startTestApp(ScopeModule);
  });
  afterAll(() => t.close());

  it('a request-scoped provider is created once per HTTP request and shared by the items of a batch', async () => {
    const first = await t.rpc([call('scoped.whoami', undefined, 1), call('scoped.whoami', undefined, 2), call('scoped.explicit', undefined, 3), call('scoped.explicit', undefined, 4)], { headers: { 'x-tag': 'one' } });
    const second = await t.rpc([call('scoped.whoami', undefined, 1), call('scoped.explicit', undefined, 2)], { headers: { 'x-tag': 'two' } });
    const [a1, a2, e1, e2] = first.body;
    expect(a1.result).toEqual({ instance: a1.result.instance, tag: 'one', singletons: 1, same: true });
    expect(a2.result).toEqual(a1.result);
    expect(e1.result.wrapped).toBe(e2.result.wrapped);
    const [b1, f1] = second.body;
    expect(b1.result).toEqual({ instance: b1.result.instance, tag: 'two', singletons: 1, same: true });
    const instances = [a1.result.instance, e1.result.wrapped, b1.result.instance, f1.result.wrapped];
    expect(new Set(instances).size).toBe(4);
  });

  it('filters apply on request-scoped providers too', async () => {
    const res = await t.rpc(call('scoped.filtered'));
    expect(res.body).toEqual(err({ code: -32002, message: expect.stringMatching(/^Not found: instance \d+$/), data: { via: 'filter' } }));
  });

  it('singletons stay singletons', async () => {
    await t.rpc(call('scoped.whoami'));
    await t.rpc(call('scoped.whoami'));
    expect(SingletonCounter.created).toBe(1);
  });
});

// ---------------------------------------------------------------------------------------------

@Injectable()
class PlainMethods {
  @RpcMethod('plain.add')
  add(@RpcParam('a') a: number, @RpcParam('b') b: number) {
    return a + b;
  }

  @RpcMethod('plain.async')
  async later(params: { v: number }) {
    return params.v;
  }
}

@Module({ imports: [JsonRpcModule.forRoot()], providers: [PlainMethods] })
class FastPathModule {}

describe('the fast path (no enhancers anywhere)', () => {
  let t: TestApp;
  let create: jest.SpiedFunction<ExternalContextCreator['create']>;
  beforeAll(async () => {
    create = jest.spyOn(ExternalContextCreator.prototype, 'create');
    t = await startTestApp(FastPathModule);
  });
  afterAll(async () => {
    create.mockRestore();
    await t.close();
  });

  it('serves calls and batches without building a Nest context for them', async () => {
    expect((await t.rpc(call('plain.add', [2, 3]))).body).toEqual(ok(5));
    expect((await t.rpc([call('plain.add', { a: 1, b: 1 }, 1), call('plain.async', { v: 9 }, 2)])).body).toEqual([ok(2, 1), ok(9, 2)]);
    expect(create).not.toHaveBeenCalled();
  });
});

describe('the chained path builds its Nest context once, at startup', () => {
  let t: TestApp;
  let create: jest.SpiedFunction<ExternalContextCreator['create']>;
  beforeAll(async () => {
    create = jest.spyOn(ExternalContextCreator.prototype, 'create');
    t = await startTestApp(LocalModule);
  });
  afterAll(async () => {
    create.mockRestore();
    await t.close();
  });

  it('calls do not create contexts per request for singleton providers', async () => {
    const atStartup = create.mock.calls.length;
    expect(atStartup).toBeGreaterThan(0);
    await t.rpc(call('method.intercepted', { x: 1 }));
    await t.rpc([call('method.intercepted', { x: 1 }, 1), call('class.intercepted', undefined, 2)]);
    expect(create.mock.calls.length).toBe(atStartup);
    // Only methods with enhancers were wrapped: method.plain, next to them, stays on the fast path.
    expect((await t.rpc(call('method.plain'))).body).toEqual(ok('no enhancers'));
    const wrapped = create.mock.calls.map((args) => args[2]).sort();
    expect(wrapped).toEqual(['filterPassesOthers', 'filtered', 'filtered', 'guarded', 'guarded', 'intercepted', 'intercepted', 'piped', 'recovered', 'rejectingPipe', 'throwingGuard', 'asyncIntercepted'].sort());
  });
});

// ---------------------------------------------------------------------------------------------
// Nest's own enhancers, set globally as Nest's docs set them up in a real app.

class Account {
  id = 'a1';
  @Exclude() password = 'hunter2';
}

class RowCountDto {
  @IsInt() count!: number;
}

@Injectable()
class StockEnhancedMethods {
  @RpcMethod('stock.account')
  account() {
    return new Account();
  }

  @RpcMethod('stock.accounts')
  @RpcStream()
  async *accounts(p: RowCountDto) {
    for (let i = 0; i < p.count; i++) yield new Account();
  }

  @RpcMethod('stock.accounts.sync')
  @RpcStream()
  *accountsSync() {
    yield new Account();
  }

  @RpcMethod('stock.accounts.durable')
  @RpcStream({ durable: true })
  async *accountsDurable() {
    yield new Account();
  }

  // The context typed as the docs write it: `ctx: RpcContext` (a class, so its metatype is one).
  @RpcMethod('stock.count')
  count(p: RowCountDto, ctx: RpcContext) {
    return { count: p.count, method: ctx.method, isContext: ctx instanceof RpcContext };
  }

  @RpcMethod('stock.ctx-first')
  ctxFirst(@RpcCtx() ctx: RpcContext, @RpcParam('word') word: string) {
    return { method: ctx.method, word };
  }

  // A sync source, iterable again and again: what a cache would replay to the next caller.
  @RpcMethod('stock.caller')
  @RpcStream({ format: StreamFormat.Sse })
  caller(@RpcCtx() ctx: RpcContext) {
    return [{ caller: ctx.request.headers['x-caller'] }];
  }

  @RpcMethod('stock.ticks')
  @RpcStream()
  async *ticks(p: RowCountDto, ctx: RpcContext) {
    for (let i = 0; i < p.count; i++) yield { i, method: ctx.method };
  }
}

@Module({
  imports: [JsonRpcModule.forRoot({ stream: { enabled: true }, durable: { enabled: true, store: new MemoryStreamStore() } })],
  providers: [StockEnhancedMethods],
})
class StockEnhancersModule {}

describe("Nest's stock global enhancers, as apps set them up", () => {
  describe('ClassSerializerInterceptor (the serialization recipe of Nest’s docs)', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp(StockEnhancersModule, (app) => {
        app.useGlobalInterceptors(new ClassSerializerInterceptor(app.get(Reflector)));
      });
    });
    afterAll(() => t.close());

    it('serializes a result: @Exclude() properties are left out', async () => {
      expect((await t.rpc(call('stock.account'))).body).toEqual(ok({ id: 'a1' }));
    });

    it('serializes every row of a stream (async and sync generators) instead of failing the stream', async () => {
      for (const method of ['stock.accounts', 'stock.accounts.sync']) {
        const res = await t.post(call(method, method === 'stock.accounts' ? { count: 2 } : undefined), { path: '/rpc/stream' });
        expect([method, res.status]).toEqual([method, 200]);
        const rows = (await res.text()).trim().split('\n').map((line) => JSON.parse(line));
        expect([method, rows]).toEqual([method, method === 'stock.accounts' ? [{ id: 'a1' }, { id: 'a1' }] : [{ id: 'a1' }]]);
      }
      expect(t.logger.text('error')).toBe('');
    });

    it('serializes the rows of a durable stream', async () => {
      const started = await t.rpc(call('stock.accounts.durable'));
      const streamId = (started.body as { result: { stream_id: string } }).result.stream_id;
      expect(typeof streamId).toBe('string');
      const res = await fetch(`${t.url}/rpc/streams/${streamId}`);
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text).toContain('event: chunk\ndata: {"id":"a1"}\n\n');
      expect(text).toContain('event: done\n');
      expect(t.logger.text('error')).toBe('');
    });
  });

  describe('CacheInterceptor app-wide (APP_INTERCEPTOR), which caches every GET by URL', () => {
    let t: TestApp;
    beforeAll(async () => {
      @Module({ imports: [StockEnhancersModule, CacheModule.register()], providers: [{ provide: APP_INTERCEPTOR, useClass: CacheInterceptor }] })
      class CachedApp {}
      t = await startTestApp(CachedApp);
    });
    afterAll(() => t.close());

    it('a GET stream is never answered from the cache: not with another caller’s rows, not with an empty stream', async () => {
      const url = `${t.url}/rpc/stream?method=stock.caller&id=1`;
      const first = await fetch(url, { headers: { 'x-caller': 'alice' } });
      expect(first.status).toBe(200);
      expect(await first.text()).toContain('data: {"caller":"alice"}\n\n');
      const second = await fetch(url, { headers: { 'x-caller': 'bob' } });
      const text = await second.text();
      expect(text).not.toContain('alice');
      expect(second.status).toBe(500);
      expect(JSON.parse(text)).toEqual({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: 1 });
      expect(t.logger.text('error')).toContain('already streamed to another request');
      expect(t.logger.text('error')).toContain('CacheInterceptor');
    });
  });

  describe('ValidationPipe with validateCustomDecorators, transform, whitelist and forbidNonWhitelisted', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp(StockEnhancersModule, (app) => {
        app.useGlobalPipes(new ValidationPipe({ validateCustomDecorators: true, transform: true, whitelist: true, forbidNonWhitelisted: true }));
      });
    });
    afterAll(() => t.close());

    it('hands the handler its RpcContext untouched (the pipe validates params, never the context)', async () => {
      expect((await t.rpc(call('stock.count', { count: 2 }))).body).toEqual(ok({ count: 2, method: 'stock.count', isContext: true }));
      expect((await t.rpc(call('stock.ctx-first', { word: 'hi' }))).body).toEqual(ok({ method: 'stock.ctx-first', word: 'hi' }));
      const res = await t.post(call('stock.ticks', { count: 2 }), { path: '/rpc/stream' });
      expect(res.status).toBe(200);
      expect(await res.text()).toBe('{"i":0,"method":"stock.ticks"}\n{"i":1,"method":"stock.ticks"}\n');
      expect(t.logger.text('error')).toBe('');
    });

    it('still refuses invalid params', async () => {
      expect((await t.rpc(call('stock.count', { count: 'x' }))).body).toMatchObject({ error: { code: -32602 } });
    });
  });
});
