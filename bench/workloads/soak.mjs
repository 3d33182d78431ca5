/**
 * Soak figures, not tests:
 * 1. memory per idle attached SSE subscriber with 10,000 of them on one running durable stream
 *    (SQLite store), beside bare Fastify holding as many idle SSE responses. Goal: < 30 KB.
 * 2. one durable stream with 1,000 subscribers (in two client processes): delivery latency from
 *    the commit (its start, so the commit is included) to each client, p50/p99 over every
 *    (subscriber, event), at 10 events/s and at 50 events/s. Goal: p99 < 50 ms.
 * 3. two instances on one Redis (skipped without Redis at REDIS_URL): a stream produced on A,
 *    10 subscribers attached through B. Events/s reaching B's clients with A producing as fast
 *    as it can (20,000 events), and cross-instance delivery p50/p99 with A producing 500 events/s.
 *
 * Servers and subscribers run in child processes started through `sh -c 'ulimit -n …'`: 10,000
 * sockets need a file-descriptor limit above the usual 1,024 (the soft limit is raised to 65,536,
 * or to the hard limit when that is lower).
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, '..', 'dist');
const clients = join(here, '..', 'lib', 'soak-clients.mjs');
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const RAISE_FD_LIMIT = 'ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"; echo "FDLIMIT $(ulimit -n)" >&2; exec "$0" "$@"';

/** Spawns `node <args>` with a raised fd limit; resolves with the child once a stdout line matches `ready`. */
function startWithFds(args, env, ready) {
  const child = spawn('sh', ['-c', RAISE_FD_LIMIT, process.execPath, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let out = '';
  let err = '';
  child.stderr.on('data', (chunk) => (err += chunk));
  const lines = [];
  const promise = new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const m = ready.exec(out);
      if (m) resolve({ child, match: m, fdLimit: /FDLIMIT (\d+)/.exec(err)?.[1], output: () => out, lines });
    });
    child.once('exit', (code, signal) => reject(new Error(`${args.join(' ')} exited with ${code ?? signal}: ${out}\n${err.slice(-2000)}`)));
  });
  return promise;
}

const startServer = async (script, env = {}) => {
  const s = await startWithFds(['--expose-gc', join(dist, script)], env, /LISTENING (\d+)/);
  return { ...s, url: `http://127.0.0.1:${s.match[1]}` };
};

/** The JSON line a `watch` client prints last. */
function finalJson(client) {
  return new Promise((resolve, reject) => {
    const check = () => {
      const out = client.output();
      if (!out.endsWith('\n')) return;
      const line = out.trim().split('\n').at(-1);
      if (line?.startsWith('{')) resolve(JSON.parse(line));
    };
    client.child.stdout.on('data', check);
    client.child.once('close', (code) => {
      check();
      reject(new Error(`watch client exited with ${code} without a result`));
    });
    check();
  });
}

async function rpc(url, method, params) {
  const res = await fetch(`${url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', method, params, id: 1 }) });
  const body = await res.json();
  if (!body.result) throw new Error(JSON.stringify(body));
  return body.result;
}
const mem = async (url) => (await fetch(`${url}/__mem`)).json();

async function idleMemory(serverUrl, sseUrl, count) {
  const before = await mem(serverUrl);
  const holder = await startWithFds([clients, 'hold', sseUrl, String(count)], {}, /READY/);
  try {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const after = await mem(serverUrl);
    return { kb: Math.max(after.rss - before.rss, after.heapUsed - before.heapUsed) / count / 1024, rss: (after.rss - before.rss) / count / 1024, heap: (after.heapUsed - before.heapUsed) / count / 1024 };
  } finally {
    holder.child.kill('SIGKILL');
  }
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];

/**
 * Starts `soak.ticks` on `producer`, attaches `count` subscribers through `via` (split over
 * `processes` client processes, so the clients' own work uses both cores), lets it run, and
 * returns the merged figures.
 */
async function delivery(producer, via, count, n, intervalMs, processes = 1) {
  const { stream_id: id } = await rpc(producer.url, 'soak.ticks', { n, intervalMs });
  const share = Math.ceil(count / processes);
  const watchers = await Promise.all(
    Array.from({ length: processes }, (_, p) =>
      startWithFds([clients, 'watch', `${via.url}/rpc/streams/${id}`, String(Math.min(share, count - p * share)), String(n), `${producer.url}/__commits/${id}`], {}, /READY/),
    ),
  );
  const results = Promise.all(watchers.map(finalJson));
  const cpu = async () => {
    const { user, system } = await (await fetch(`${via.url}/__cpu`)).json();
    return user + system;
  };
  const cpuBefore = await cpu();
  await fetch(`${producer.url}/__go`, { method: 'POST' });
  try {
    const parts = await results;
    const cpuMicros = (await cpu()) - cpuBefore;
    const latencies = parts.flatMap((r) => r.latencies).sort((a, b) => a - b);
    const rates = parts.flatMap((r) => r.rates).sort((a, b) => a - b);
    return {
      deliveries: latencies.length,
      missing: parts.reduce((sum, r) => sum + r.missing, 0),
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      max: latencies.at(-1),
      eventsPerSecond: rates.length ? percentile(rates, 50) : null,
      // CPU the delivering server spent per delivery (the machine's load does not inflate it much):
      // one event to N subscribers costs about N times this, in one tick.
      cpuMicrosPerDelivery: cpuMicros / Math.max(1, latencies.length),
    };
  } finally {
    for (const w of watchers) w.child.kill('SIGKILL');
  }
}

async function redisAnswers() {
  const { Redis } = await import('ioredis');
  const probe = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1000 });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

const ms = (x) => Math.round(x * 10) / 10;

export default {
  name: 'soak',
  async run({ quick }) {
    const idle = quick ? 2000 : 10_000;
    const fanout = quick ? 200 : 1000;
    const rows = [];
    const dir = mkdtempSync(join(tmpdir(), 'bench-soak-'));
    try {
      const app = await startServer('soak-app.js', { SOAK_DB: join(dir, 'soak.sqlite') });
      try {
        console.error(`  fd limit of the server and client processes: ${app.fdLimit}`);
        const { sse_url: idleUrl } = await rpc(app.url, 'soak.idle');
        const module = await idleMemory(app.url, `${app.url}${idleUrl}`, idle);
        const bare = await startServer('durable-sse-baseline.js');
        let baseline;
        try {
          baseline = await idleMemory(bare.url, `${bare.url}/sse`, idle);
        } finally {
          bare.child.kill('SIGKILL');
        }
        console.error(`  ${idle} idle subscribers: module rss ${module.rss.toFixed(1)} KB heap ${module.heap.toFixed(1)} KB each; bare Fastify rss ${baseline.rss.toFixed(1)} KB heap ${baseline.heap.toFixed(1)} KB`);
        rows.push({ workload: `soak: memory per idle attached SSE subscriber (${idle})`, unit: 'KB', module: module.kb, baseline: baseline.kb, ratio: module.kb / baseline.kb, goal: '< 30 KB', met: module.kb < 30 });

        // Two event rates: 10/s (10,000 deliveries/s) and 50/s, a token stream's pace (50,000/s).
        for (const [events, intervalMs] of [
          [100, 100],
          [250, 20],
        ]) {
          const fan = await delivery(app, app, fanout, events, intervalMs, 2);
          const rate = Math.round(1000 / intervalMs);
          console.error(
            `  1 stream x ${fanout} subscribers, ${rate} events/s: ${fan.deliveries} deliveries (${fan.missing} missing), p50 ${ms(fan.p50)} ms, p99 ${ms(fan.p99)} ms, max ${ms(fan.max)} ms; server CPU ${fan.cpuMicrosPerDelivery.toFixed(1)} µs per delivery`,
          );
          rows.push({ workload: `soak: 1 durable stream, ${fanout} subscribers, ${rate} events/s, commit -> client p50`, unit: 'ms', module: ms(fan.p50) });
          rows.push({ workload: `soak: 1 durable stream, ${fanout} subscribers, ${rate} events/s, commit -> client p99`, unit: 'ms', module: ms(fan.p99), goal: '< 50 ms', met: fan.p99 < 50 && fan.missing === 0 });
          rows.push({ workload: `soak: 1 durable stream, ${fanout} subscribers, ${rate} events/s, server CPU per delivery`, unit: 'µs', module: Math.round(fan.cpuMicrosPerDelivery * 10) / 10 });
        }
      } finally {
        app.child.kill('SIGKILL');
      }

      if (!(await redisAnswers())) {
        console.error(`  Redis not answering at ${REDIS_URL}: the two-instance figures are skipped`);
        rows.push({ workload: 'soak: two instances on Redis (SKIPPED: no Redis)', unit: '-' });
        return rows;
      }
      const env = { SOAK_STORE: 'redis', REDIS_URL, SOAK_KEY_PREFIX: `bench:soak:${randomUUID()}:` };
      const a = await startServer('soak-app.js', env);
      const b = await startServer('soak-app.js', env);
      try {
        const flood = await delivery(a, b, 10, quick ? 5000 : 20_000, 0);
        const paced = await delivery(a, b, 10, quick ? 1000 : 2500, 2);
        const pace = Math.round(paced.eventsPerSecond);
        console.error(`  Redis, produced on A, 10 subscribers on B: flat out ${Math.round(flood.eventsPerSecond)} events/s (p99 ${ms(flood.p99)} ms); paced ${pace} events/s: p50 ${ms(paced.p50)} ms, p99 ${ms(paced.p99)} ms (missing ${flood.missing + paced.missing})`);
        rows.push({ workload: 'soak: Redis, A -> B, events/s per subscriber (producer flat out)', unit: 'events/s', module: Math.round(flood.eventsPerSecond) });
        rows.push({ workload: `soak: Redis, A -> B, commit -> client p50 (${pace} events/s)`, unit: 'ms', module: ms(paced.p50) });
        rows.push({ workload: `soak: Redis, A -> B, commit -> client p99 (${pace} events/s)`, unit: 'ms', module: ms(paced.p99) });
      } finally {
        a.child.kill('SIGKILL');
        b.child.kill('SIGKILL');
        const { Redis } = await import('ioredis');
        const redis = new Redis(REDIS_URL);
        const keys = await redis.keys(`${env.SOAK_KEY_PREFIX}*`);
        if (keys.length) await redis.del(...keys);
        await redis.quit();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    return rows;
  },
};
