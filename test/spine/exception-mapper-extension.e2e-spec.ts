/**
 * `RpcExceptionMapper` as an extension point: the app's subclass, named by the `exceptionMapper`
 * option, is created with dependency injection (here a provider of the app's global module) and
 * maps what calls throw on every transport — `/rpc` and a stream's error frame — through the
 * documented hook it overrides, leaving the rest to the module's defaults.
 */
import { ConflictException, Global, HttpException, Injectable, Module, NotFoundException } from '@nestjs/common';
import type { RpcErrorObject } from '@nest-jsonrpc/protocol';
import { JsonRpcModule, RpcExceptionMapper, RpcMethod, RpcStream } from '@nest-jsonrpc/server';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';

/** The app's own error codes: a provider the mapper is given by Nest. */
@Injectable()
class AppErrorCodes {
  readonly conflict = 4090;
}

@Global()
@Module({ providers: [AppErrorCodes], exports: [AppErrorCodes] })
class ErrorCodesModule {}

@Injectable()
class ConflictMapper extends RpcExceptionMapper {
  constructor(private readonly codes: AppErrorCodes) {
    super();
  }

  protected override fromHttpException(error: HttpException, method?: string): RpcErrorObject {
    if (error.getStatus() !== 409) return super.fromHttpException(error, method);
    return { code: this.codes.conflict, message: `Conflict: ${error.message}`, data: { method } };
  }
}

@Injectable()
class Accounts {
  @RpcMethod('account.create') create(): never {
    throw new ConflictException('name taken');
  }

  @RpcMethod('account.get') get(): never {
    throw new NotFoundException();
  }

  @RpcMethod('account.export') @RpcStream()
  async *export(): AsyncGenerator<{ row: number }> {
    yield { row: 1 };
    throw new ConflictException('changed meanwhile');
  }
}

describe('the app subclass of RpcExceptionMapper (exceptionMapper option)', () => {
  let t: TestApp;
  beforeAll(async () => {
    @Module({ imports: [ErrorCodesModule, JsonRpcModule.forRoot({ stream: { enabled: true }, exceptionMapper: ConflictMapper })], providers: [Accounts] })
    class AppModule {}
    t = await startTestApp(AppModule);
  });
  afterAll(() => t.close());

  it('is created with its injected dependency and maps a call through its hook', async () => {
    const res = await t.rpc({ jsonrpc: '2.0', method: 'account.create', id: 1 });
    expect(res.body).toEqual({ jsonrpc: '2.0', error: { code: 4090, message: 'Conflict: name taken', data: { method: 'account.create' } }, id: 1 });
  });

  it('leaves what its hook does not cover to the module', async () => {
    const res = await t.rpc({ jsonrpc: '2.0', method: 'account.get', id: 2 });
    expect(res.body.error.code).toBe(-32002);
  });

  it("maps a stream's failure too: the error frame carries the app's code", async () => {
    const res = await t.post({ jsonrpc: '2.0', method: 'account.export', id: 3 }, { path: '/rpc/stream' });
    expect(await res.text()).toBe('{"row":1}\n{"error":{"code":4090,"message":"Conflict: changed meanwhile","data":{"method":"account.export"}}}\n');
  });
});
