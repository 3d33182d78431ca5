/**
 * The demo's durable `report.generate`: start, attach, drop, resume with Last-Event-ID, cancel —
 * the README's curl walk-through, over HTTP.
 */
import { Module, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { JsonRpcModule, MemoryStreamStore } from '@nest-jsonrpc/server';
import { AccountModule } from '../../apps/demo/src/account/account.module.js';
import { DurableRoutesIdentity } from '../../apps/demo/src/reports/durable-routes-identity.js';
import { ReportsRpc } from '../../apps/demo/src/reports/reports.rpc.js';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';
import { openSse } from './support/sse-client.js';

// As the demo wires it (apps/demo/src/app.module.ts): the account corner (login, bearer guard) and
// the middleware that gives the durable REST routes the same identity.
@Module({
  imports: [JsonRpcModule.forRoot({ durable: { enabled: true, store: new MemoryStreamStore() } }), AccountModule],
  providers: [ReportsRpc],
})
class DemoReportsModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(DurableRoutesIdentity).forRoutes('{*path}');
  }
}

describe('demo: report.generate', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(DemoReportsModule);
  });
  afterAll(() => t.close());

  it('starts, streams progress, survives a drop and resumes where it left off', async () => {
    const res = await t.rpc({ jsonrpc: '2.0', method: 'report.generate', params: { steps: 6, delayMs: 30 }, id: 1 });
    const { stream_id, sse_url, status } = res.body.result;
    expect(status).toBe('running');
    const first = await openSse(`${t.url}${sse_url}`);
    await first.waitForEvents(2);
    first.close();
    const lastSeen = first.events.at(-1)!.id!;
    const resumed = await openSse(`${t.url}${sse_url}`, { headers: { 'last-event-id': lastSeen } });
    await resumed.ended;
    const all = [...first.events, ...resumed.events];
    expect(all.map((e) => Number(e.id))).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(all.slice(0, 6).map((e) => [e.event, JSON.parse(e.data).percent])).toEqual([
      ['progress', 17],
      ['progress', 33],
      ['progress', 50],
      ['progress', 67],
      ['progress', 83],
      ['progress', 100],
    ]);
    expect(all[6].event).toBe('chunk');
    expect(JSON.parse(all[6].data)).toEqual({ report: expect.stringMatching(/^\/reports\/.+\.pdf$/), pages: 18 });
    expect(all[7]).toEqual({ id: '8', event: 'done', data: '{}' });
    expect((await fetch(`${t.url}/rpc/streams/${stream_id}`, { headers: { 'last-event-id': '8' } })).status).toBe(204);
  });

  it('cancels with DELETE', async () => {
    const res = await t.rpc({ jsonrpc: '2.0', method: 'report.generate', params: { steps: 100, delayMs: 50 }, id: 2 });
    const { stream_id, sse_url } = res.body.result;
    const sse = await openSse(`${t.url}${sse_url}`);
    await sse.waitForEvents(1);
    const del = await fetch(`${t.url}/rpc/streams/${stream_id}`, { method: 'DELETE' });
    expect(await del.json()).toEqual({ stream_id, status: 'cancelled' });
    await sse.ended;
    expect(sse.events.at(-1)!.event).toBe('cancelled');
  });

  it('a report started while logged in is seen, listed and cancelled with the same bearer token, and by nobody else', async () => {
    const login = async (username: string) =>
      (await t.rpc({ jsonrpc: '2.0', method: 'auth.login', params: { username, password: `${username}-pw` }, id: 1 })).body.result.token as string;
    const bob = { authorization: `Bearer ${await login('bob')}` };
    const alice = { authorization: `Bearer ${await login('alice')}` };
    const res = await t.rpc({ jsonrpc: '2.0', method: 'report.generate', params: { steps: 100, delayMs: 50 }, id: 3 }, { headers: bob });
    const { stream_id, sse_url } = res.body.result;

    const sse = await openSse(`${t.url}${sse_url}`, { headers: bob });
    expect(sse.status).toBe(200);
    await sse.waitForEvents(1);
    const list = await fetch(`${t.url}/rpc/streams?status=running`, { headers: bob });
    expect((await list.json()).streams.map((s: { stream_id: string }) => s.stream_id)).toEqual([stream_id]);

    for (const headers of [alice, {}]) {
      const other = await fetch(`${t.url}/rpc/streams/${stream_id}/events`, { headers });
      expect(other.status).toBe(404);
      expect(await other.json()).toEqual({ error: { code: -32002, message: 'Stream not found' } });
    }
    const forged = await fetch(`${t.url}/rpc/streams`, { headers: { authorization: 'Bearer not-a-token' } });
    expect(forged.status).toBe(401);
    expect(await forged.json()).toEqual({ error: { code: -32001, message: 'Invalid or expired token; call auth.login' } });

    const del = await fetch(`${t.url}/rpc/streams/${stream_id}`, { method: 'DELETE', headers: bob });
    expect(await del.json()).toEqual({ stream_id, status: 'cancelled' });
    await sse.ended;
    expect(sse.events.at(-1)!.event).toBe('cancelled');
  });
});
