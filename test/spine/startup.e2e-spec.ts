/**
 * Discovery at bootstrap (providers and controllers), one clear startup error
 * naming every offender, module option validation, forRootAsync.
 */
import { Controller, Inject, Injectable, Module } from '@nestjs/common';
import { IsInt } from 'class-validator';
import { JsonRpcModule, JsonRpcServer, RpcMethod, RpcParam, RpcParams, RpcStartupError, type RpcMethodOptions } from '@nest-jsonrpc/server';
import { bootError } from '../support/boot-error.js';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';

class PairDto {
  @IsInt() a!: number;
  @IsInt() b!: number;
}

describe('startup checks', () => {
  it('names every offender in one error: duplicates, keys claimed twice, reserved and empty names, unknown options and option values', async () => {
    @Injectable()
    class First {
      @RpcMethod('dup.name') one() { return 1; }
      @RpcMethod('twice.claimed') twice(@RpcParam('a') a: number, @RpcParam('a') b: number) { return a + b; }
      @RpcMethod('dto.and.param') mixed(@RpcParams() dto: PairDto, @RpcParam('b') b: number) { return [dto, b]; }
      @RpcMethod('rpc.discover') reserved() { return null; }
      @RpcMethod('') empty() { return null; }
    }

    @Injectable()
    class Second {
      @RpcMethod('dup.name') two() { return 2; }
      @RpcMethod('bad.options', { cache: 10, rolesMatch: 'some', allowPositional: 'yes', roles: 'admin', deprecated: 3 } as unknown as RpcMethodOptions)
      badOptions() { return null; }
    }

    @Controller()
    class Third {
      @RpcMethod('dup.name') three() { return 3; }
    }

    @Module({ imports: [JsonRpcModule.forRoot()], providers: [First, Second], controllers: [Third] })
    class BrokenModule {}

    const error = await bootError(BrokenModule);
    expect(error).toBeInstanceOf(RpcStartupError);
    const problems = [...(error as RpcStartupError).problems].sort();
    expect(problems).toEqual([
      'First.empty: @RpcMethod needs a non-empty name',
      'First.mixed ("dto.and.param"): params key "b" is claimed by both argument 0 and argument 1',
      'First.reserved: method name "rpc.discover" is reserved (names starting with "rpc." belong to the protocol)',
      'First.twice ("twice.claimed"): params key "a" is claimed by both argument 0 and argument 1',
      'Second.badOptions ("bad.options"): option "allowPositional" must be a boolean',
      'Second.badOptions ("bad.options"): option "deprecated" must be a boolean or a string',
      'Second.badOptions ("bad.options"): option "roles" must be an array of non-empty strings',
      'Second.badOptions ("bad.options"): option "rolesMatch" must be "any" or "all", got "some"',
      'Second.badOptions ("bad.options"): unknown option "cache"',
      'duplicate method name "dup.name" on Third.three and First.one',
      'duplicate method name "dup.name" on Third.three and Second.two',
    ]);
    expect(error!.message).toMatch(/^JsonRpcModule cannot start:\n {2}- /);
    expect(error!.message.split('\n')).toHaveLength(problems.length + 1);
  });

  it('rejects invalid module options, all of them in one error', async () => {
    @Module({
      imports: [
        JsonRpcModule.forRoot({
          path: 'rpc',
          maxBatchSize: 0,
          maxRequestSize: -1,
          batchConcurrency: 1.5,
          httpStatus: { enabled: 'yes' },
          params: { rejectUnknown: 1, strict: true },
          security: { rolesMatch: 'most' },
          timeout: 5,
        } as never),
      ],
    })
    class BadOptionsModule {}

    const error = await bootError(BadOptionsModule);
    expect(error?.message).toBe(
      [
        'JsonRpcModule: invalid options:',
        '  - unknown option "timeout"',
        '  - unknown option "params.strict"',
        '  - "path" must be a string starting with "/", without a trailing "/", spaces or route wildcards, got "rpc"',
        '  - "maxRequestSize" must be an integer >= 0, got -1',
        '  - "maxBatchSize" must be an integer >= 1, got 0',
        '  - "batchConcurrency" must be an integer >= 1, got 1.5',
        '  - "security.rolesMatch" must be "any" or "all", got "most"',
        '  - "httpStatus.enabled" must be a boolean',
        '  - "params.rejectUnknown" must be a boolean',
      ].join('\n'),
    );
  });

  it('a valid app starts and reports what it mapped', async () => {
    @Injectable()
    class Ok {
      @RpcMethod('ok.a') a() { return 'a'; }
      @RpcMethod('ok.b') b() { return 'b'; }
    }
    @Module({ imports: [JsonRpcModule.forRoot()], providers: [Ok] })
    class OkModule {}
    const t = await startTestApp(OkModule);
    try {
      expect(t.logger.text('log')).toContain('Mapped 2 JSON-RPC method(s) on POST /rpc');
      const registry = t.app.get(JsonRpcServer).registry;
      expect([...registry.all()].map((d) => d.name).sort()).toEqual(['ok.a', 'ok.b']);
      expect(Object.isFrozen(registry.get('ok.a'))).toBe(true);
    } finally {
      await t.close();
    }
  });
});

// ---------------------------------------------------------------------------------------------

const RPC_CONFIG = Symbol('RPC_CONFIG');

@Module({ providers: [{ provide: RPC_CONFIG, useValue: { path: '/from-config', maxBatchSize: 2 } }], exports: [RPC_CONFIG] })
class ConfigModule {}

@Injectable()
class AsyncMethods {
  @RpcMethod('async.ping') ping() { return 'pong'; }
}

@Controller('things')
class ThingsController {
  @RpcMethod('controller.method')
  fromController(@RpcParam('n') n: number) {
    return n * 10;
  }
}

/** Provided through a factory under a string token: discovered through its instance. */
class FactoryMade {
  @RpcMethod('factory.method') hello() { return 'from a factory provider'; }
}

class BaseMethods {
  @RpcMethod('inherited.method') inherited() { return `inherited by ${this.constructor.name}`; }
}

@Injectable()
class DerivedMethods extends BaseMethods {}

@Module({
  imports: [
    JsonRpcModule.forRootAsync({
      imports: [ConfigModule],
      inject: [RPC_CONFIG],
      useFactory: async (config: { path: string; maxBatchSize: number }) => {
        await new Promise((r) => setTimeout(r, 5));
        return { path: config.path, maxBatchSize: config.maxBatchSize };
      },
    }),
  ],
  providers: [AsyncMethods, DerivedMethods, { provide: 'FACTORY_MADE', useFactory: () => new FactoryMade() }],
  controllers: [ThingsController],
})
class AsyncModule {}

describe('forRootAsync and discovery', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(AsyncModule);
  });
  afterAll(() => t.close());

  const call = (method: string, params?: unknown, id = 1) => ({ jsonrpc: '2.0', method, params, id });

  it('takes its options from the injected factory (path, maxBatchSize)', async () => {
    expect((await t.rpc(call('async.ping'), { path: '/from-config' })).body).toEqual({ jsonrpc: '2.0', result: 'pong', id: 1 });
    expect((await t.post(call('async.ping'))).status).toBe(404);
    expect((await t.rpc([call('async.ping', undefined, 1), call('async.ping', undefined, 2), call('async.ping', undefined, 3)], { path: '/from-config' })).body).toEqual({
      jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request: batch of 3 exceeds the limit of 2' }, id: null,
    });
  });

  it('discovers methods on controllers, factory-made providers and inherited methods', async () => {
    const rpc = (body: unknown) => t.rpc(body, { path: '/from-config' });
    expect((await rpc(call('controller.method', [4]))).body).toEqual({ jsonrpc: '2.0', result: 40, id: 1 });
    expect((await rpc(call('factory.method'))).body).toEqual({ jsonrpc: '2.0', result: 'from a factory provider', id: 1 });
    expect((await rpc(call('inherited.method'))).body).toEqual({ jsonrpc: '2.0', result: 'inherited by DerivedMethods', id: 1 });
  });

  it('does not turn the controller into an HTTP route of its own', async () => {
    expect((await fetch(`${t.url}/things`)).status).toBe(404);
  });
});

describe('forRootAsync with invalid options', () => {
  it('fails at bootstrap with the options error', async () => {
    @Module({ imports: [JsonRpcModule.forRootAsync({ useFactory: () => ({ maxBatchSize: -5 }) })] })
    class BadAsyncModule {}
    const error = await bootError(BadAsyncModule);
    expect(error?.message).toBe('JsonRpcModule: invalid options:\n  - "maxBatchSize" must be an integer >= 1, got -5');
  });

  it('inject resolves providers of the imported modules', async () => {
    @Injectable()
    class Settings {
      readonly maxRequestSize = 10;
    }
    @Module({ providers: [Settings], exports: [Settings] })
    class SettingsModule {}
    @Injectable()
    class Tiny {
      constructor(@Inject(Settings) readonly settings: Settings) {}
      @RpcMethod('tiny') tiny() { return 1; }
    }
    @Module({
      imports: [SettingsModule, JsonRpcModule.forRootAsync({ imports: [SettingsModule], inject: [Settings], useFactory: (s: Settings) => ({ maxRequestSize: s.maxRequestSize }) })],
      providers: [Tiny],
    })
    class TinyModule {}
    const t = await startTestApp(TinyModule);
    try {
      const res = await t.rpc({ jsonrpc: '2.0', method: 'tiny', id: 1 });
      expect(res.status).toBe(413);
      expect(res.body.error).toEqual({ code: -32600, message: 'Invalid Request: body exceeds 10 bytes' });
    } finally {
      await t.close();
    }
  });
});
