/**
 * A Standard Schema through Nest's chain: when guards, interceptors or pipes apply (the method no
 * longer takes the direct path), params are still validated at the pipes step — after the guards
 * and interceptors, before the app's pipes — and an async schema's arguments reach the pipes and
 * the handler settled, never as a Promise. Request-scoped providers likewise.
 */
import { Injectable, Module, Scope, UseGuards, UseInterceptors, UsePipes, type ArgumentMetadata, type CallHandler, type CanActivate, type ExecutionContext, type NestInterceptor, type PipeTransform } from '@nestjs/common';
import { tap } from 'rxjs';
import { z } from 'zod';
import { JsonRpcModule, RpcContext, RpcMethod, RpcParam, getRpcContext } from '@nest-jsonrpc/server';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';

const events: string[] = [];

@Injectable()
class RecordingGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    events.push(`guard ${getRpcContext(context)!.method}`);
    return getRpcContext(context)!.request.headers['x-deny'] === undefined;
  }
}

@Injectable()
class RecordingInterceptor implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler) {
    events.push('interceptor before');
    return next.handle().pipe(tap({ error: (e: { message?: string }) => events.push(`interceptor saw ${e.message}`) }));
  }
}

@Injectable()
class RecordingPipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata) {
    const seen = value instanceof Promise ? 'a Promise' : value instanceof RpcContext ? 'the context' : JSON.stringify(value, Object.keys(value ?? {}).sort());
    events.push(`pipe ${metadata.type} ${seen}`);
    return value;
  }
}

const slowCheck = async (name: string) => {
  await new Promise((resolve) => setTimeout(resolve, 5));
  if (name === 'boom') throw new Error('lookup failed');
  return name !== 'taken';
};

const Signup = z.object({ name: z.string().trim().toLowerCase().refine(slowCheck, 'Name is taken'), age: z.number().int().default(30) });

@Injectable()
@UseGuards(RecordingGuard)
@UseInterceptors(RecordingInterceptor)
@UsePipes(RecordingPipe)
class ChainedMethods {
  // Typed with zod's own helper on purpose: swc (these tests, `nest start -b swc`) records zod's
  // runtime `z.output` function as the parameter's type, which must not pass for a DTO.
  @RpcMethod('chained.signup', { params: Signup })
  signup(p: z.output<typeof Signup>) {
    events.push('handler');
    return p;
  }

  @RpcMethod('chained.greet')
  greet(@RpcParam('name', { schema: z.string().refine(slowCheck, 'Name is taken') }) name: string) {
    return `hi ${name}`;
  }
}

@Injectable({ scope: Scope.REQUEST })
class ScopedMethods {
  @RpcMethod('scoped.signup', { params: Signup })
  signup(p: z.output<typeof Signup>) {
    return p;
  }
}

describe('Standard Schema params through the Nest chain', () => {
  let t: TestApp;
  const call = async (method: string, params: unknown, headers?: Record<string, string>) =>
    (await t.rpc({ jsonrpc: '2.0', method, params, id: 1 }, { headers })).body;

  beforeAll(async () => {
    @Module({ imports: [JsonRpcModule.forRoot()], providers: [ChainedMethods, ScopedMethods] })
    class AppModule {}
    t = await startTestApp(AppModule);
  });
  afterAll(() => t.close());
  beforeEach(() => (events.length = 0));

  it('guard, interceptor, then validation; the pipe and the handler get the settled output', async () => {
    expect((await call('chained.signup', { name: ' Ada ' })).result).toEqual({ name: 'ada', age: 30 });
    expect(events).toEqual(['guard chained.signup', 'interceptor before', 'pipe custom {"age":30,"name":"ada"}', 'pipe custom the context', 'handler']);
  });

  it('an invalid call: the guard and interceptor ran, the interceptor sees the -32602, no pipe, no handler', async () => {
    expect((await call('chained.signup', { name: 'taken' })).error).toEqual({ code: -32602, message: 'Invalid params', data: [{ path: 'name', message: 'Name is taken', code: 'custom' }] });
    expect(events).toEqual(['guard chained.signup', 'interceptor before', 'interceptor saw Invalid params']);
  });

  it('a denied call is never validated: the guard answers first', async () => {
    expect((await call('chained.signup', { name: 'taken' }, { 'x-deny': '1' })).error.code).toBe(-32001);
    expect(events).toEqual(['guard chained.signup']);
  });

  it('a refinement that throws is -32603 through the chain too', async () => {
    expect((await call('chained.signup', { name: 'boom' })).error).toEqual({ code: -32603, message: 'Internal error' });
    expect(t.logger.text('error')).toContain('lookup failed');
  });

  it('@RpcParam with an async schema: the pipe gets the value, not a Promise', async () => {
    expect((await call('chained.greet', { name: 'bob' })).result).toBe('hi bob');
    expect(events).toContain('pipe custom "bob"');
    expect((await call('chained.greet', ['taken'])).error.data).toEqual([{ path: 'name', message: 'Name is taken', code: 'custom' }]);
  });

  it('a request-scoped provider validates the same way', async () => {
    expect((await call('scoped.signup', { name: ' Eve ', age: 41 })).result).toEqual({ name: 'eve', age: 41 });
    expect((await call('scoped.signup', { name: 'taken' })).error.code).toBe(-32602);
  });
});
