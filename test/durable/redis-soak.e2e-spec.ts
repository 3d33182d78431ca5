/**
 * A light soak on a Redis Cluster (three primaries, started here) and on one Redis node: two app
 * instances share the store; 30 streams run at once (maxRunning.total exact under 32 concurrent
 * starts), each followed by two subscribers — one attached from the start on one instance, one
 * that drops mid-stream and resumes with Last-Event-ID on the other. Every subscriber must see
 * exactly the stored sequence (ids 1..n, no gap, no repeat), and on the cluster the streams'
 * keys must be spread over its nodes. About fifteen seconds per deployment on a quiet machine; a
 * subscriber that stalls for 20 s fails it, however slow the machine.
 */
import { Cluster, Redis } from 'ioredis';
import { RedisStreamStore } from '@nest-jsonrpc/server';
import { describeWithRedisServer, PrivateRedis } from '../support/redis-server.js';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';
import { ClusterStores } from './support/cluster-store.js';
import { durableModule } from './support/durable-fixtures.js';
import { openSse, type ReceivedEvent, type SseSession } from './support/sse-client.js';

const STREAMS = 30;
const ROWS = 600;

interface Deployment {
  name: string;
  start(): Promise<void>;
  store(): RedisStreamStore;
  /** Keys under the prefix on each primary (one entry for a single node). */
  keysPerNode(prefix: string): Promise<number[]>;
  stop(): Promise<void>;
}

function cluster(): Deployment {
  const stores = new ClusterStores();
  return {
    name: 'a Redis Cluster',
    start: () => stores.start(),
    store: () => stores.store({ heartbeatMs: 1000 }),
    async keysPerNode(prefix) {
      const client: Cluster = stores.client();
      await new Promise((resolve) => client.once('ready', resolve));
      const counts = await Promise.all(client.nodes('master').map(async (node) => (await node.keys(`${prefix}*`)).length));
      client.disconnect();
      return counts;
    },
    stop: () => stores.stop(),
  };
}

function singleNode(): Deployment {
  let redis: PrivateRedis;
  const stores: RedisStreamStore[] = [];
  return {
    name: 'one Redis node',
    async start() {
      redis = await PrivateRedis.start();
    },
    store() {
      const store = new RedisStreamStore({ url: redis.url, keyPrefix: 'soak:', heartbeatMs: 1000 });
      stores.push(store);
      return store;
    },
    async keysPerNode(prefix) {
      const client = new Redis(redis.url);
      const n = (await client.keys(`${prefix}*`)).length;
      await client.quit();
      return [n];
    },
    async stop() {
      for (const store of stores) await store.close();
      await redis?.stop();
    },
  };
}

const describeSoak = describeWithRedisServer('the durable soak on Redis');

for (const deployment of [cluster(), singleNode()]) {
  describeSoak(`durable streams soak (light) on ${deployment.name}`, () => {
    let a: TestApp;
    let b: TestApp;
    let prefix: string;

    beforeAll(async () => {
      await deployment.start();
      const storeA = deployment.store();
      const storeB = deployment.store();
      prefix = (storeA as unknown as { keys: { prefix: string } }).keys.prefix;
      const durable = { enabled: true, maxRunning: { total: STREAMS } };
      a = await startTestApp(durableModule({ durable: { ...durable, store: storeA } }));
      b = await startTestApp(durableModule({ durable: { ...durable, store: storeB } }));
    }, 60_000);
    afterAll(async () => {
      await a?.close();
      await b?.close();
      await deployment.stop();
    });

    it(`${STREAMS} streams of ${ROWS} rows on two instances, two subscribers each (one drops and resumes elsewhere): every one sees the stored sequence exactly`, async () => {
      const answers = await Promise.all(
        Array.from({ length: STREAMS + 2 }, (_, k) =>
          (k % 2 ? a : b).rpc({ jsonrpc: '2.0', method: 'jobs.count', params: { n: ROWS, delayMs: 5 }, id: k }),
        ),
      );
      const ids = answers.filter((r) => r.body.result).map((r) => r.body.result.stream_id as string);
      // maxRunning.total counted exactly across both instances.
      expect(ids).toHaveLength(STREAMS);
      expect(answers.filter((r) => r.body.error).map((r) => r.body.error.code)).toEqual([-32003, -32003]);

      const followed = await Promise.all(
        ids.map(async (id, k) => {
          const [here, there] = k % 2 ? [a, b] : [b, a];
          const whole = await openSse(`${here.url}/rpc/streams/${id}`);
          // The second one drops after a number of events that differs per stream, then resumes on the other instance.
          const first = await openSse(`${there.url}/rpc/streams/${id}`);
          await whileProgressing(first, 50 + ((k * 37) % 400), async () => `the other subscriber had ${whole.events.length}; ${await storedSummary(here, id)}`);
          first.close();
          await first.ended;
          const lastSeen = first.events.at(-1)!.id!;
          const rest = await openSse(`${here.url}/rpc/streams/${id}`, { headers: { 'last-event-id': lastSeen } });
          await Promise.all([whole.ended, rest.ended]);
          return { id, whole: whole.events, split: [...first.events, ...rest.events] };
        }),
      );

      for (const { id, whole, split } of followed) {
        const expected = Array.from({ length: ROWS + 1 }, (_, k) => String(k + 1));
        expect(whole.map((e) => e.id)).toEqual(expected);
        expect(split.map((e) => e.id)).toEqual(expected);
        expect(split).toEqual(whole);
        expect(whole.at(-1)!.event).toBe('done');
        // What the store holds is what they saw.
        const page = await storedEvents(a, id);
        expect(page.map((e) => [String(e.id), e.event, JSON.stringify(e.data)])).toEqual(whole.map((e: ReceivedEvent) => [e.id, e.event, e.data]));
      }

      const perNode = await deployment.keysPerNode(prefix);
      if (perNode.length > 1) expect(perNode.filter((n) => n > 0).length).toBeGreaterThanOrEqual(2);
    }, 180_000);
  });
}

/**
 * Waits for `count` events, failing only when none has arrived for 20 s: a stalled subscriber, not a
 * slow machine (on a loaded CI machine 30 streams can take a minute; a stall is a bug whatever the
 * load). The failure says what the store and the other subscriber had then.
 */
async function whileProgressing(session: SseSession, count: number, context: () => Promise<string>): Promise<void> {
  while (session.events.length < count) {
    const seen = session.events.length;
    try {
      await session.waitFor((s) => s.events.length >= count || s.events.length > seen, 20_000);
    } catch (error) {
      throw new Error(`no event for 20 s at ${seen} of ${count}: ${(error as Error).message.slice(0, 200)}; ${await context()}`, { cause: error });
    }
  }
}

async function storedSummary(t: TestApp, id: string): Promise<string> {
  const events = await storedEvents(t, id);
  return `the store held ${events.length} event(s), the last ${JSON.stringify(events.at(-1))}`;
}

async function storedEvents(t: TestApp, id: string): Promise<Array<{ id: number; event: string; data: unknown }>> {
  const all: Array<{ id: number; event: string; data: unknown }> = [];
  for (;;) {
    const page = (await (await fetch(`${t.url}/rpc/streams/${id}/events?after=${all.length}&limit=1000`)).json()) as any;
    all.push(...page.events);
    if (page.events.length < 1000) return all;
  }
}
