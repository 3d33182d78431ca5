/**
 * Replacing an RPC provider in a test, the Nest way: `Test.createTestingModule(...)
 * .overrideProvider(X).useValue | useClass | useFactory(...)`. The methods stay routed — to the
 * replacement — through the whole pipeline (the original class's guards, params validation,
 * roles); a replacement that lacks a method fails startup naming it, never a silent -32601.
 */
import { jest } from '@jest/globals';
import { Injectable, UseGuards, type CanActivate, type ExecutionContext, type INestApplication } from '@nestjs/common';
import { testAdapter } from '../support/rpc-test-app.js';
import { Test } from '@nestjs/testing';
import { IsString, MaxLength } from 'class-validator';
import { JsonRpcModule, RpcMethod, RpcStartupError, RpcStream, getRpcContext, type RpcContext } from '@nest-jsonrpc/server';
import { createRpcTestClient, JsonRpcError, type RpcTestClient } from '@nest-jsonrpc/server/testing';
import { rejectionOf } from '../support/async.js';

class GreetParams {
  @IsString() @MaxLength(10) name!: string;
}

@Injectable()
class Clock {
  now() {
    return 'real time';
  }
}

/** Records every call it lets through, and refuses callers named "Mallory". */
const guarded: string[] = [];
@Injectable()
class NoMalloryGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const rpc = getRpcContext(context)!;
    guarded.push(`${rpc.method}:${context.getClass().name}.${context.getHandler().name}`);
    return (rpc.params as { name?: string } | undefined)?.name !== 'Mallory';
  }
}

@Injectable()
@UseGuards(NoMalloryGuard)
class GreetingRpc {
  constructor(private readonly clock: Clock) {}

  @RpcMethod('greet')
  greet(params: GreetParams): { message: string } {
    return { message: `Hello, ${params.name}!` };
  }

  @RpcMethod('time')
  time(): string {
    return this.clock.now();
  }

  @RpcMethod('rows')
  @RpcStream()
  async *rows(params: { count: number }): AsyncGenerator<{ n: number }> {
    for (let n = 0; n < params.count; n++) yield { n };
  }
}

async function start(configure: (builder: ReturnType<typeof Test.createTestingModule>) => ReturnType<typeof Test.createTestingModule>) {
  const moduleRef = await configure(
    Test.createTestingModule({ imports: [JsonRpcModule.forRoot({ stream: { enabled: true } })], providers: [GreetingRpc, Clock] }),
  ).compile();
  const app = moduleRef.createNestApplication<INestApplication>(testAdapter(), { logger: false });
  return { app, rpc: await createRpcTestClient(app) };
}


describe('overrideProvider on an RPC provider', () => {
  let app: INestApplication | undefined;
  let rpc: RpcTestClient;

  beforeEach(() => {
    guarded.length = 0;
  });
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('useValue(plain object): the methods are answered by the mock, behind the original class’s guards and validation', async () => {
    const greet = jest.fn((params: GreetParams, ctx: RpcContext) => ({ message: `mocked ${params.name} via ${ctx.method}` }));
    const time = jest.fn(() => 'frozen');
    ({ app, rpc } = await start((b) => b.overrideProvider(GreetingRpc).useValue({ greet, time, rows: async function* () { yield { n: 42 }; } })));

    expect(await rpc.call('greet', { name: 'Ada' })).toEqual({ message: 'mocked Ada via greet' });
    expect(greet).toHaveBeenCalledTimes(1);
    expect(greet.mock.calls[0][0]).toBeInstanceOf(GreetParams);
    expect(await rpc.call('time')).toBe('frozen');
    const rows: unknown[] = [];
    for await (const row of rpc.stream('rows', { count: 3 })) rows.push(row);
    expect(rows).toEqual([{ n: 42 }]);
    // The original class's guard ran, and saw the original class and the method's name.
    expect(guarded).toEqual(['greet:GreetingRpc.greet', 'time:GreetingRpc.time', 'rows:GreetingRpc.rows']);

    // Validation still runs before the mock: -32602 and the mock is not called.
    const invalid = await rejectionOf(rpc.call('greet', { name: 'a name far too long' }), JsonRpcError);
    expect([invalid.code, invalid.message, invalid.data]).toEqual([
      -32602,
      'Invalid params',
      [{ path: 'name', message: 'name must be shorter than or equal to 10 characters', code: 'maxLength' }],
    ]);
    // So does the guard: Nest's ForbiddenException, as an RPC error.
    const refused = await rejectionOf(rpc.call('greet', { name: 'Mallory' }), JsonRpcError);
    expect(refused.code).not.toBe(-32601);
    expect(greet).toHaveBeenCalledTimes(1);
  });

  it('useClass(subclass): overridden methods are the subclass’s, the others inherited, and its injected dependencies work', async () => {
    @Injectable()
    class FriendlierGreetingRpc extends GreetingRpc {
      override greet(params: GreetParams) {
        return { message: `Hi there, ${params.name}! (${this.time()})` };
      }
    }
    ({ app, rpc } = await start((b) => b.overrideProvider(GreetingRpc).useClass(FriendlierGreetingRpc)));
    expect(await rpc.call('greet', { name: 'Ada' })).toEqual({ message: 'Hi there, Ada! (real time)' });
    expect(await rpc.call('time')).toBe('real time');
    const invalid = await rejectionOf(rpc.call('greet', { name: 42 }), JsonRpcError);
    expect(invalid.code).toBe(-32602);
    expect(guarded).toEqual(['greet:FriendlierGreetingRpc.greet', 'time:FriendlierGreetingRpc.time', 'greet:FriendlierGreetingRpc.greet']);
  });

  it('useFactory: the factory’s value answers, with the factory’s injected dependencies', async () => {
    ({ app, rpc } = await start((b) =>
      b.overrideProvider(GreetingRpc).useFactory({
        factory: (clock: Clock) => ({ greet: (p: GreetParams) => ({ message: `factory ${p.name}` }), time: () => `factory ${clock.now()}`, rows: () => [] }),
        inject: [Clock],
      }),
    ));
    expect(await rpc.call('greet', { name: 'Ada' })).toEqual({ message: 'factory Ada' });
    expect(await rpc.call('time')).toBe('factory real time');
  });

  it('useValue(an instance of the class, with one method replaced): the replaced one answers', async () => {
    const partial = Object.assign(new GreetingRpc(new Clock()), { time: () => 'patched' });
    ({ app, rpc } = await start((b) => b.overrideProvider(GreetingRpc).useValue(partial)));
    expect(await rpc.call('time')).toBe('patched');
    expect(await rpc.call('greet', { name: 'Ada' })).toEqual({ message: 'Hello, Ada!' });
  });

  it('a replacement without one of the methods fails startup, naming each method and why', async () => {
    const moduleRef = await Test.createTestingModule({ imports: [JsonRpcModule.forRoot({ stream: { enabled: true } })], providers: [GreetingRpc, Clock] })
      .overrideProvider(GreetingRpc)
      .useValue({ greet: () => ({ message: 'only greet' }), time: 'not a function' })
      .compile();
    app = moduleRef.createNestApplication<INestApplication>(testAdapter(), { logger: false, abortOnError: false });
    const error = await app.init().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(RpcStartupError);
    expect((error as RpcStartupError).problems).toEqual([
      'GreetingRpc.time ("time") has no handler: the provider is replaced by a value without a function time, so "time" could not be answered. Give the replacement a time() method (a mock function will do).',
      'GreetingRpc.rows ("rows") has no handler: the provider is replaced by a value without a function rows, so "rows" could not be answered. Give the replacement a rows() method (a mock function will do).',
    ]);
  });

  it('an app subclass that overrides a decorated method without repeating the decorator keeps the route (no override involved)', async () => {
    @Injectable()
    class LoudGreetingRpc extends GreetingRpc {
      override greet(params: GreetParams) {
        return { message: `HELLO, ${params.name.toUpperCase()}!` };
      }
    }
    const moduleRef = await Test.createTestingModule({ imports: [JsonRpcModule.forRoot({ stream: { enabled: true } })], providers: [LoudGreetingRpc, Clock] }).compile();
    app = moduleRef.createNestApplication<INestApplication>(testAdapter(), { logger: false });
    rpc = await createRpcTestClient(app);
    expect(await rpc.call('greet', { name: 'Ada' })).toEqual({ message: 'HELLO, ADA!' });
    expect((await rejectionOf(rpc.call('greet', { name: 'x'.repeat(11) }), JsonRpcError)).code).toBe(-32602);
  });
});
