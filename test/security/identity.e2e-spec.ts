/**
 * Who is calling, one rule everywhere: `request.user` set by a guard or Fastify hook, or — where
 * Nest middleware leaves it on Fastify — the raw request's `user`; `security.userIdResolver`
 * names the user for 'user' scopes and for durable-stream ownership alike.
 */
import { Injectable, Module, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { JsonRpcModule, MemoryStreamStore, RpcMethod, RpcStream, type RpcContext } from '@nest-jsonrpc/server';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';

@Injectable()
class WhoAmI {
  @RpcMethod('me', { roles: ['member'] })
  me(_p: unknown, ctx: RpcContext) {
    return { user: ctx.user, roles: ctx.roles };
  }

  @RpcMethod('jobs.mine')
  @RpcStream({ durable: true })
  async *job() {
    yield { done: true };
  }
}

/** Plain Nest middleware: on Fastify it sees the raw Node request, and sets `user` there. */
function headerIdentity(req: IncomingMessage & { user?: unknown }, _res: ServerResponse, next: () => void) {
  const name = req.headers['x-user'];
  if (typeof name === 'string') req.user = { username: name, roles: ['member'] };
  next();
}

@Module({
  imports: [JsonRpcModule.forRoot({ durable: { enabled: true, store: new MemoryStreamStore() } })],
  providers: [WhoAmI],
})
class IdentityModule implements NestModule {
  configure(consumer: MiddlewareConsumer) {
    consumer.apply(headerIdentity).forRoutes('*');
  }
}

describe('caller identity', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(IdentityModule);
  });
  afterAll(() => t.close());

  it('a user that Nest middleware set on the raw request reaches ctx.user, roles and the roles check', async () => {
    const res = await t.rpc({ jsonrpc: '2.0', method: 'me', id: 1 }, { headers: { 'x-user': 'ada' } });
    expect(res.body).toEqual({ jsonrpc: '2.0', result: { user: { username: 'ada', roles: ['member'] }, roles: ['member'] }, id: 1 });
    const anonymous = await t.rpc({ jsonrpc: '2.0', method: 'me', id: 2 });
    expect(anonymous.body).toEqual({ jsonrpc: '2.0', error: { code: -32001, message: 'One of the following roles is required: member' }, id: 2 });
  });

  it('durable streams belong to the same user (username when there is no id): listed for them, 404 for others', async () => {
    const started = await t.rpc({ jsonrpc: '2.0', method: 'jobs.mine', id: 1 }, { headers: { 'x-user': 'ada' } });
    const id = started.body.result.stream_id as string;
    const mine = await (await fetch(`${t.url}/rpc/streams`, { headers: { 'x-user': 'ada' } })).json();
    expect(mine.streams.map((s: { stream_id: string }) => s.stream_id)).toContain(id);
    expect((await fetch(`${t.url}/rpc/streams/${id}/events`, { headers: { 'x-user': 'bob' } })).status).toBe(404);
    expect((await fetch(`${t.url}/rpc/streams/${id}/events`, { headers: { 'x-user': 'ada' } })).status).toBe(200);
  });
});

describe('caller identity from Nest middleware, in an app with a global prefix', () => {
  const me = { jsonrpc: '2.0', method: 'me', id: 1 };
  const ada = { headers: { 'x-user': 'ada' } };

  it("forRoutes('*') middleware runs under the prefix only: on the module's routes (outside it) the caller is anonymous", async () => {
    const t = await startTestApp(IdentityModule, (app) => void app.setGlobalPrefix('api'));
    try {
      expect((await t.rpc(me, ada)).body).toEqual({ jsonrpc: '2.0', error: { code: -32001, message: 'One of the following roles is required: member' }, id: 1 });
    } finally {
      await t.close();
    }
  });

  it("with the module's paths excluded from the prefix, Nest mounts the middleware on them too: /rpc and the durable routes know the caller", async () => {
    const t = await startTestApp(IdentityModule, (app) => void app.setGlobalPrefix('api', { exclude: ['rpc', 'rpc/{*path}'] }));
    try {
      expect((await t.rpc(me, ada)).body).toEqual({ jsonrpc: '2.0', result: { user: { username: 'ada', roles: ['member'] }, roles: ['member'] }, id: 1 });
      const started = await t.rpc({ jsonrpc: '2.0', method: 'jobs.mine', id: 2 }, ada);
      const id = started.body.result.stream_id as string;
      expect((await fetch(`${t.url}/rpc/streams/${id}/events`, ada)).status).toBe(200);
      expect((await fetch(`${t.url}/rpc/streams/${id}/events`, { headers: { 'x-user': 'bob' } })).status).toBe(404);
    } finally {
      await t.close();
    }
  });
});
