/**
 * Crash safety, proven with real processes (docs/durable.md, "Durability"). An app (support/crash-app.ts) runs
 * in a child process on the SQLite store, on Redis and on a Redis Cluster; clients attach over HTTP; the process is
 * SIGKILLed mid-stream and a new process starts on the same store:
 * - every event any client received before the kill is still there, in order;
 * - nothing after the last committed event is invented (row k's data is `{"n":k}`, the ids have
 *   no gap, the last event is the terminal one);
 * - the stream ends with -32603 `Stream interrupted`;
 * - a client resuming with Last-Event-ID gets exactly the missing tail.
 * And SIGTERM mid-stream commits what is in flight, ends every stream with the interrupted error
 * and every attached response cleanly (`event: end`), and exits within the shutdown grace.
 *
 * Redis runs need REDIS_URL (skipped loudly when unreachable; failed with REQUIRE_REDIS=1); the
 * cluster runs start a private local cluster (redis-server and redis-cli needed, same rule).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { compileChildApp } from '../durable/support/compile-child.js';
import { tempDir } from '../durable/support/durable-fixtures.js';
import { openSse, type ReceivedEvent, type SseSession } from '../durable/support/sse-client.js';
import { describeWithRedis, REDIS_URL } from '../support/redis.js';
import { describeWithRedisServer, PrivateRedisCluster } from '../support/redis-server.js';
import { TEST_PLATFORM } from '../support/rpc-test-app.js';

const INTERRUPTED = '{"error":{"code":-32603,"message":"Stream interrupted"}}';
/** The module has no grace timer of its own; an orchestrator's is 30 s by default (Kubernetes). The test allows a third. */
const SHUTDOWN_GRACE_MS = 10_000;

interface ChildApp {
  child: ChildProcess;
  url: string;
  /** Everything the child wrote to stderr (its warnings and errors). */
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const tmp = tempDir();
let entry: string;
const children = new Set<ChildProcess>();

beforeAll(() => {
  entry = compileChildApp(tmp.file('child'), 'test/crash/support/crash-app.ts');
});
afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
  tmp.remove();
});

async function startChild(env: Record<string, string>): Promise<ChildApp> {
  const child = spawn(process.execPath, [entry], { env: { ...process.env, RPC_TEST_PLATFORM: TEST_PLATFORM, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    }),
  );
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk) => {
      out += chunk;
      const m = /LISTENING (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    void exited.then(({ code, signal }) => reject(new Error(`child exited with ${code ?? signal} before listening:\n${stderr}`)));
  });
  return { child, url: `http://127.0.0.1:${port}`, stderr: () => stderr, exited };
}

async function startStream(url: string, params: unknown): Promise<string> {
  const res = await fetch(`${url}/rpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'jobs.tick', params, id: 1 }),
  });
  const body = (await res.json()) as any;
  if (!body.result) throw new Error(JSON.stringify(body));
  return body.result.stream_id;
}

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms))),
  ]);
}

/** A stream's whole stored history, attached from the start on `url` (ends at the terminal event). */
async function storedHistory(url: string, id: string, timeoutMs: number): Promise<ReceivedEvent[]> {
  const replay = await openSse(`${url}/rpc/streams/${id}`);
  expect(replay.status).toBe(200);
  await within(replay.ended, timeoutMs, `the terminal event of ${id}`);
  expect(replay.end).toBeDefined();
  return replay.events;
}

/** Rows are `{"n":k}` at id k, ids 1..N without a gap, one terminal event last. */
function expectGenuine(history: ReceivedEvent[], terminal: { event: string; data: string }) {
  const n = history.length;
  expect(history.map((e) => Number(e.id))).toEqual(Array.from({ length: n }, (_, k) => k + 1));
  expect(history.slice(0, -1).filter((e, k) => e.event !== 'chunk' || e.data !== `{"n":${k + 1}}`)).toEqual([]);
  expect(history[n - 1]).toEqual({ id: String(n), ...terminal });
}

const seen = (session: SseSession) => session.events.map((e) => ({ id: e.id, event: e.event, data: e.data }));

function crashSuite(store: string, env: () => Record<string, string>, recoveryMs: number) {
  it(`SIGKILL mid-stream (${store}): a new process keeps every event any client saw, invents nothing, ends with "Stream interrupted", and serves the exact tail on resume`, async () => {
    const first = await startChild(env());
    // Stream 1: started on /rpc, attached from the start and (later) from id 10.
    const id1 = await startStream(first.url, { burst: 3 });
    const fromStart = await openSse(`${first.url}/rpc/streams/${id1}`);
    // Stream 2: started live on the stream route.
    const live = await openSse(`${first.url}/rpc/stream`, { body: JSON.stringify({ jsonrpc: '2.0', method: 'jobs.tick', id: 2 }) });
    expect(live.status).toBe(200);
    const id2 = live.headers.get('x-stream-id')!;
    await fromStart.waitForEvents(30, 20_000);
    const fromTen = await openSse(`${first.url}/rpc/streams/${id1}`, { headers: { 'last-event-id': '10' } });
    await Promise.all([fromTen.waitForEvents(5, 20_000), live.waitForEvents(10, 20_000)]);

    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    await Promise.all([fromStart.ended, fromTen.ended, live.ended]);
    // None of them saw a terminal event: the kill cut them off mid-stream.
    for (const session of [fromStart, fromTen, live]) expect(session.events.map((e) => e.event)).not.toContain('error');

    const second = await startChild(env());
    try {
      const history1 = await storedHistory(second.url, id1, recoveryMs);
      const history2 = await storedHistory(second.url, id2, recoveryMs);
      for (const history of [history1, history2]) expectGenuine(history, { event: 'error', data: INTERRUPTED });
      // Everything each client received is stored, in order, at the same ids.
      expect(seen(fromStart)).toEqual(history1.slice(0, fromStart.events.length));
      expect(seen(fromTen)).toEqual(history1.slice(10, 10 + fromTen.events.length));
      expect(seen(live)).toEqual(history2.slice(0, live.events.length));

      // Resuming after the last event each client saw: exactly the missing tail, then `end`.
      for (const [session, id, history] of [
        [fromStart, id1, history1],
        [live, id2, history2],
      ] as const) {
        const last = session.events.at(-1)!.id!;
        const resumed = await openSse(`${second.url}/rpc/streams/${id}`, { headers: { 'last-event-id': last } });
        await within(resumed.ended, 10_000, 'the resumed tail');
        expect(seen(resumed)).toEqual(history.slice(Number(last)));
        expect(resumed.end).toBeDefined();
      }
      // The JSON pages agree with the SSE replay.
      const page = (await (await fetch(`${second.url}/rpc/streams/${id1}/events?limit=1000`)).json()) as { events: Array<{ id: number }> };
      expect(page.events.map((e) => e.id)).toEqual(history1.slice(0, 1000).map((e) => Number(e.id)));
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  }, 90_000);

  it(`SIGTERM mid-stream (${store}): in-flight commits finish, every stream ends with "Stream interrupted", every response ends cleanly, the process exits within the grace`, async () => {
    const first = await startChild(env());
    // Bursts of 64 rows: a commit group is nearly always pending or in flight when SIGTERM lands.
    const id1 = await startStream(first.url, { burst: 64 });
    const attached = await openSse(`${first.url}/rpc/streams/${id1}`);
    const live = await openSse(`${first.url}/rpc/stream`, { body: JSON.stringify({ jsonrpc: '2.0', method: 'jobs.tick', params: { burst: 64 }, id: 2 }) });
    const id2 = live.headers.get('x-stream-id')!;
    await Promise.all([attached.waitForEvents(200, 20_000), live.waitForEvents(200, 20_000)]);

    const signalled = Date.now();
    first.child.kill('SIGTERM');
    const exit = await within(first.exited, SHUTDOWN_GRACE_MS, 'the graceful exit');
    const took = Date.now() - signalled;
    // Nest's shutdown hook closes the app, then re-raises the signal.
    expect(exit.code === 0 || exit.signal === 'SIGTERM').toBe(true);
    expect(took).toBeLessThan(SHUTDOWN_GRACE_MS);
    expect(first.stderr()).not.toMatch(/ERROR/);
    await Promise.all([attached.ended, live.ended]);

    const second = await startChild(env());
    try {
      for (const [session, id] of [
        [attached, id1],
        [live, id2],
      ] as const) {
        // The client got the terminal event and `event: end`: a clean end, not a dropped connection.
        expect(session.end).toBeDefined();
        const history = await storedHistory(second.url, id, 10_000);
        expectGenuine(history, { event: 'error', data: INTERRUPTED });
        // What was produced before the signal was committed and delivered: the client saw all of it.
        expect(seen(session)).toEqual(history);
      }
      // Nothing was left running for the next process to recover.
      expect(second.stderr()).not.toContain('left running by a previous process');
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  }, 90_000);
}

describe('crash safety on the SQLite store (child processes)', () => {
  const file = tmp.file(`crash-${randomUUID()}.sqlite`);
  crashSuite('SQLite', () => ({ CRASH_STORE: 'sqlite', CRASH_SQLITE_FILE: file }), 15_000);
});

const describeRedis = await describeWithRedis('the Redis crash-safety tests');

describeRedis('crash safety on the Redis store (child processes)', () => {
  const keyPrefix = `test:crash:${randomUUID()}:`;
  afterAll(async () => {
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${keyPrefix}*`);
    if (keys.length) await redis.del(...keys);
    await redis.quit();
  });
  // A killed instance is presumed dead 3 heartbeats (3 s) after its last one; a survivor then
  // ends its streams on its next heartbeat.
  crashSuite('Redis', () => ({ CRASH_STORE: 'redis', REDIS_URL, CRASH_KEY_PREFIX: keyPrefix }), 20_000);
});

describeWithRedisServer('the crash-safety tests on a Redis Cluster')('crash safety on a Redis Cluster store (child processes)', () => {
  const keyPrefix = `test:crash:${randomUUID()}:`;
  let cluster: PrivateRedisCluster;
  beforeAll(async () => {
    cluster = await PrivateRedisCluster.start();
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });
  crashSuite(
    'Redis Cluster',
    () => ({ CRASH_STORE: 'redis-cluster', CRASH_REDIS_NODES: cluster.startupNodes.map((n) => `${n.host}:${n.port}`).join(','), CRASH_KEY_PREFIX: keyPrefix }),
    20_000,
  );
});
