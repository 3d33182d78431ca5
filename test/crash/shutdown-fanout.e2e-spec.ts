/**
 * Graceful shutdown with a store whose fan-out arrives after the commit returns (as Redis pub/sub
 * does): attached clients still get the interrupted terminal event and `event: end` before the
 * HTTP server's close ends their responses. Found by test/crash/ on Node 24 with Redis, where the
 * PUBLISH came back after Fastify's preClose had already ended the attached responses.
 */
import { MemoryStreamStore, type DurableEventListener } from '@nest-jsonrpc/server';
import { eventually } from '../support/async.js';
import { startTestApp } from '../support/rpc-test-app.js';
import { durableModule, feeds } from '../durable/support/durable-fixtures.js';
import { openSse } from '../durable/support/sse-client.js';

/** Memory store whose listeners hear every commit 50 ms late, in order. */
class LateFanOutStore extends MemoryStreamStore {
  override subscribe(id: string, listener: DurableEventListener): Promise<() => void> {
    return super.subscribe(id, (events) => void setTimeout(() => listener(events), 50));
  }
}

describe('graceful shutdown with a late fan-out (Redis-like)', () => {
  it('an attached client gets the interrupted terminal event and `event: end` before the server closes (the live route: test/crash/crash-safety, on Redis)', async () => {
    const store = new LateFanOutStore();
    const t = await startTestApp(durableModule({ stream: { enabled: true }, durable: { enabled: true, store } }));
    const started = await t.rpc({ jsonrpc: '2.0', method: 'jobs.manual', id: 1 });
    const id = started.body.result.stream_id as string;
    const feed = await eventually(() => feeds.get(id));
    const attached = await openSse(`${t.url}/rpc/streams/${id}`);
    feed.push({ a: 1 }, { a: 2 });
    await attached.waitForEvents(2);

    await t.close();
    await attached.ended;
    expect(attached.events.map((e) => [e.id, e.event, e.data])).toEqual([
      ['1', 'chunk', '{"a":1}'],
      ['2', 'chunk', '{"a":2}'],
      ['3', 'error', '{"error":{"code":-32603,"message":"Stream interrupted"}}'],
    ]);
    expect(attached.end).toBeDefined();
    await store.close();
  });
});
