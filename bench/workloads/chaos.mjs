/**
 * Chaos figures, not tests: a soak of durable streams, rate-limited and cached calls on Redis while
 * that Redis is killed (SIGKILL) and restarted again and again for outages of random length, then
 * once for 60 s.
 *
 * A private redis-server (append-only file with `appendfsync always`, on a free port, in a temp dir) backs two app instances
 * (bench/apps/chaos-app.ts): 10 durable streams, each producing `{k}` every 50 ms, each followed by
 * one SSE subscriber on each instance (in this process), plus a rate-limited and cached call every
 * 100 ms. Figures:
 * - events lost: stored events some subscriber never got, plus rows whose `k` is not their id
 *   (a lost or invented row), plus buffered rows dropped (a stream ended with -32603). Goal 0.
 * - stalls: a subscriber that heard nothing for 2 s while Redis had been up for 2 s. Goal 0.
 * - catch-up after Redis returns: from the moment the restarted redis-server answers PING (its
 *   append-only file loaded) to each subscriber's next event, max (and p50) over every subscriber
 *   and outage. Goal <= 1 s.
 * - memory during the 60 s outage: RSS and heap of the instance whose heap grew most, before the
 *   outage and at its peak (sampled every 5 s after a forced GC), while producers buffer what they
 *   cannot commit.
 * - calls that failed during outages (goal 0: `onStoreError` 'allow', a cache error is a miss),
 *   `[ioredis] Unhandled error event` lines (goal 0) and outage warnings per outage.
 *
 * `--quick`: 40 s of short outages and a 20 s long one instead of 3 min and 60 s. CHAOS_SEED makes
 * the outage schedule repeatable (printed either way). The instances beat every 5 s (the store's
 * default; CHAOS_HEARTBEAT_MS to change it): a shorter heartbeat on a loaded machine can make a
 * live instance look dead (the log says so), which the figures would count as lost events.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { stripVTControlCharacters } from 'node:util';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createParser } from 'eventsource-parser';
// The tests' seeded generator, so a run's outage schedule can be replayed.
import { seededRandom } from '../../test/support/seeded-random.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, '..', 'dist');
const STREAMS = 10;
const INTERVAL_MS = 50;
const STALL_MS = 2000;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));


async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A redis-server child on a free port with an append-only file: kill() is SIGKILL, start() reuses port and data. */
class ChaosRedis {
  constructor(port, dir) {
    this.port = port;
    this.dir = dir;
    this.child = undefined;
  }

  get url() {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start() {
    // appendfsync always: what Redis acknowledged is in the file when it is killed (everysec may
    // still hold it in memory when the disk is slow, and a restart then lacks it; CHAOS_FSYNC=everysec to see that).
    const fsync = process.env.CHAOS_FSYNC ?? 'always';
    this.child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir, '--save', '', '--appendonly', 'yes', '--appendfsync', fsync], {
      stdio: 'ignore',
    });
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; await sleep(20)) {
      if (spawnSync('redis-cli', ['-p', String(this.port), 'ping'], { encoding: 'utf8' }).stdout.trim() === 'PONG') return;
    }
    throw new Error(`redis-server on ${this.port} did not answer`);
  }

  async kill() {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }
}

function startApp(env) {
  const child = spawn(process.execPath, ['--expose-gc', join(dist, 'chaos-app.js')], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  const app = { child, log: '', url: '' };
  for (const stream of [child.stdout, child.stderr]) stream.on('data', (chunk) => (app.log += chunk));
  return new Promise((resolve, reject) => {
    child.stdout.on('data', () => {
      const m = /LISTENING (\d+)/.exec(app.log);
      if (m && !app.url) {
        app.url = `http://127.0.0.1:${m[1]}`;
        resolve(app);
      }
    });
    child.once('exit', (code, signal) => reject(new Error(`chaos-app exited with ${code ?? signal}: ${app.log.slice(-2000)}`)));
  });
}

async function rpc(url, method, params) {
  const res = await fetch(`${url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', method, params, id: 1 }) });
  return res.json();
}

/**
 * One SSE subscriber that reconnects with Last-Event-ID whenever its response ends before the
 * terminal event (an id-less `error` frame, a dropped connection). Records every id it gets and
 * when the last one arrived.
 */
class Subscriber {
  constructor(url) {
    this.url = url;
    this.ids = [];
    this.data = [];
    this.duplicates = 0;
    this.lastEventAt = Date.now();
    this.done = false;
    this.reconnects = 0;
    this.controller = new AbortController();
    this.finished = this.run();
  }

  async run() {
    while (!this.done && !this.controller.signal.aborted) {
      try {
        const headers = { accept: 'text/event-stream' };
        if (this.ids.length) headers['last-event-id'] = String(this.ids.at(-1));
        const res = await fetch(this.url, { headers, signal: this.controller.signal });
        if (res.status === 204) return;
        if (res.status !== 200) throw new Error(`status ${res.status}`);
        const parser = createParser({
          onEvent: (e) => {
            if (e.id === undefined) return; // `end`, or the id-less error frame: reconnect after the response ends
            const id = Number(e.id);
            const last = this.ids.at(-1) ?? 0;
            if (id <= last) {
              this.duplicates++;
              return;
            }
            this.ids.push(id);
            this.data.push(e.event === 'chunk' ? JSON.parse(e.data).k : e.event);
            this.lastEventAt = Date.now();
            if (e.event === 'done' || e.event === 'cancelled' || e.event === 'error') this.done = true;
          },
        });
        const decoder = new TextDecoder();
        for await (const chunk of res.body) parser.feed(decoder.decode(chunk, { stream: true }));
      } catch {
        // dropped, refused (503 while Redis is down): try again
      }
      if (!this.done && !this.controller.signal.aborted) {
        this.reconnects++;
        await sleep(250);
      }
    }
  }

  stop() {
    this.controller.abort();
  }
}

async function storedEvents(url, id) {
  const all = [];
  for (;;) {
    const page = await (await fetch(`${url}/rpc/streams/${id}/events?after=${all.length}&limit=1000`)).json();
    all.push(...page.events);
    if (page.events.length < 1000) return all;
  }
}

const mem = async (url) => (await fetch(`${url}/__mem`)).json();
const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];

export default {
  name: 'chaos',
  async run({ quick }) {
    if (spawnSync('redis-server', ['--version']).status !== 0) {
      console.error('  redis-server is not installed: the chaos figures are skipped');
      return [{ workload: 'chaos (SKIPPED: no redis-server)', unit: '-' }];
    }
    const seed = Number(process.env.CHAOS_SEED ?? Date.now() % 1_000_000);
    const rand = seededRandom(seed);
    const chaosMs = quick ? 40_000 : 180_000;
    const longOutageMs = quick ? 20_000 : 60_000;
    console.error(`  seed ${seed}; ${chaosMs / 1000} s of outages of 1-8 s every 3-10 s, then one of ${longOutageMs / 1000} s`);
    const dir = mkdtempSync(join(tmpdir(), 'bench-chaos-'));
    const redis = new ChaosRedis(await freePort(), dir);
    await redis.start();
    const env = { CHAOS_REDIS_URL: redis.url, CHAOS_KEY_PREFIX: 'bench:chaos:' };
    const apps = [await startApp(env), await startApp(env)];
    const subscribers = [];
    const catchUps = [];
    const startups = [];
    let stalls = 0;
    let failedCalls = 0;
    let calls = 0;
    let outages = 0;
    let redisUpSince = Date.now();
    let running = true;
    let watch;
    try {
      const ids = [];
      for (let s = 0; s < STREAMS; s++) {
        const answer = await rpc(apps[s % 2].url, 'chaos.ticks', { intervalMs: INTERVAL_MS });
        ids.push(answer.result.stream_id);
        for (const app of apps) subscribers.push(new Subscriber(`${app.url}/rpc/streams/${answer.result.stream_id}`));
      }
      // Calls through the shared limit and cache, alternating instances.
      const caller = (async () => {
        for (let i = 0; running; i++) {
          const started = Date.now();
          calls++;
          try {
            const answer = await rpc(apps[i % 2].url, 'chaos.limited');
            if (!answer.result || Date.now() - started > 1000) {
              failedCalls++;
              console.error(`  a call failed after ${Date.now() - started} ms (Redis ${redisUpSince === undefined ? 'down' : 'up'}): ${JSON.stringify(answer)}`);
            }
          } catch (error) {
            failedCalls++;
            console.error(`  a call failed: ${error instanceof Error ? error.message : String(error)}`);
          }
          await sleep(100);
        }
      })();
      // Stall watch: nothing heard for STALL_MS while Redis has been up for STALL_MS.
      const stalled = new Set();
      watch = setInterval(() => {
        const now = Date.now();
        for (const sub of subscribers) {
          const isStalled = redisUpSince !== undefined && now - redisUpSince > STALL_MS && now - sub.lastEventAt > STALL_MS && !sub.done;
          if (isStalled && !stalled.has(sub)) {
            stalls++;
            stalled.add(sub);
          } else if (!isStalled) stalled.delete(sub);
        }
      }, 250);

      const outage = async (ms) => {
        await redis.kill();
        redisUpSince = undefined;
        outages++;
        await sleep(ms);
        const lastBefore = subscribers.map((sub) => sub.ids.at(-1) ?? 0);
        const spawnedAt = Date.now();
        await redis.start();
        // Redis is back when it answers PING (after loading its append-only file).
        const restartedAt = (redisUpSince = Date.now());
        startups.push(restartedAt - spawnedAt);
        // Each subscriber's next event after the restart.
        const deadline = restartedAt + 30_000;
        const caughtUp = subscribers.map(() => undefined);
        while (caughtUp.some((t) => t === undefined) && Date.now() < deadline) {
          subscribers.forEach((sub, i) => {
            if (caughtUp[i] === undefined && (sub.ids.at(-1) ?? 0) > lastBefore[i]) caughtUp[i] = sub.lastEventAt - restartedAt;
          });
          await sleep(5);
        }
        catchUps.push(...caughtUp.map((t) => t ?? 30_000));
      };

      const chaosEnd = Date.now() + chaosMs;
      while (Date.now() < chaosEnd) {
        await sleep(3000 + rand() * 7000);
        await outage(1000 + rand() * 7000);
      }

      // The long outage, with memory sampled before and during it.
      await sleep(5000);
      const before = await Promise.all(apps.map((app) => mem(app.url)));
      const peak = apps.map(() => ({ rss: 0, heapUsed: 0 }));
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          await sleep(5000);
          if (!sampling) break;
          const now = await Promise.all(apps.map((app) => mem(app.url)));
          now.forEach((m, i) => {
            peak[i].rss = Math.max(peak[i].rss, m.rss);
            peak[i].heapUsed = Math.max(peak[i].heapUsed, m.heapUsed);
          });
        }
      })();
      await outage(longOutageMs);
      sampling = false;
      await sampler;
      const MB = 1048576;
      const memory = apps.map((_, i) => ({ rssBefore: before[i].rss / MB, rssPeak: peak[i].rss / MB, heapBefore: before[i].heapUsed / MB, heapPeak: peak[i].heapUsed / MB }));
      await sleep(3000);

      // Stop everything and compare what each subscriber got with what is stored.
      running = false;
      clearInterval(watch);
      await caller;
      for (let s = 0; s < ids.length; s++) await fetch(`${apps[s % 2].url}/rpc/streams/${ids[s]}`, { method: 'DELETE' });
      await Promise.race([Promise.all(subscribers.map((sub) => sub.finished)), sleep(15_000)]);
      let lost = 0;
      let duplicates = 0;
      let events = 0;
      let dropped = 0;
      for (let s = 0; s < ids.length; s++) {
        const stored = await storedEvents(apps[0].url, ids[s]);
        events += stored.length;
        stored.forEach((e, k) => {
          if (e.id !== k + 1 || (e.event === 'chunk' && e.data.k !== e.id)) lost++;
        });
        if (stored.at(-1)?.event === 'error') {
          dropped++;
          console.error(`  stream ${ids[s]} ended with an error after ${stored.length - 1} events: ${JSON.stringify(stored.at(-1).data)}`);
        }
        for (const sub of subscribers.slice(2 * s, 2 * s + 2)) {
          duplicates += sub.duplicates;
          const got = new Set(sub.ids);
          lost += stored.filter((e) => !got.has(e.id)).length;
        }
      }
      const sorted = [...catchUps].sort((a, b) => a - b);
      const logs = apps.map((app) => app.log).join('\n');
      const lags = await Promise.all(apps.map(async (app) => (await fetch(`${app.url}/__lag`)).json()));
      const worstLag = Math.max(...lags.map((l) => l.maxMs));
      for (const line of logs.split('\n').filter((l) => l.includes('ended as interrupted'))) console.error(`  ${stripVTControlCharacters(line)}`);
      const unhandled = (logs.match(/Unhandled error event/g) ?? []).length;
      const warnings = (logs.match(/Redis connection for .* lost/g) ?? []).length;
      const reconnects = subscribers.reduce((sum, sub) => sum + sub.reconnects, 0);
      const worst = memory.reduce((a, b) => (b.heapPeak - b.heapBefore > a.heapPeak - a.heapBefore ? b : a));
      const sortedStartups = [...startups].sort((a, b) => a - b);
      console.error(
        `  ${outages} outages; ${events} events in ${STREAMS} streams, ${subscribers.length} subscribers (${reconnects} reconnects, ${duplicates} duplicates dropped by them); ` +
          `lost ${lost}, streams ended by a full buffer ${dropped}, stalls ${stalls}; catch-up p50 ${percentile(sorted, 50)} ms, max ${sorted.at(-1)} ms; ` +
          `${calls} limited+cached calls, ${failedCalls} failed or slower than 1 s; ${unhandled} "Unhandled error event" lines, ${warnings} connection-lost warnings (${(warnings / outages).toFixed(1)} per outage); ` +
          `during the ${longOutageMs / 1000} s outage (after a GC, every 5 s): RSS ${worst.rssBefore.toFixed(1)} -> peak ${worst.rssPeak.toFixed(1)} MB, ` +
          `heap ${worst.heapBefore.toFixed(1)} -> peak ${worst.heapPeak.toFixed(1)} MB; Redis took ${sortedStartups[0]}-${sortedStartups.at(-1)} ms to answer PING after its restart; ` +
          `the instances' event loops ran up to ${Math.round(worstLag)} ms late`,
      );
      return [
        { workload: `chaos: events lost over ${outages} Redis outages (${events} events)`, unit: 'events', module: lost + dropped, goal: '0', met: lost + dropped === 0 },
        { workload: 'chaos: stalled subscribers', unit: 'stalls', module: stalls, goal: '0', met: stalls === 0 },
        { workload: 'chaos: catch-up after Redis returns, p50', unit: 'ms', module: percentile(sorted, 50) },
        { workload: 'chaos: catch-up after Redis returns, max', unit: 'ms', module: sorted.at(-1), goal: '<= 1000 ms', met: sorted.at(-1) <= 1000 },
        { workload: `chaos: peak RSS during a ${longOutageMs / 1000} s outage (5 streams at 20 rows/s buffered per instance)`, unit: 'MB', module: Math.round(worst.rssPeak * 10) / 10, baseline: Math.round(worst.rssBefore * 10) / 10 },
        { workload: `chaos: heap growth during a ${longOutageMs / 1000} s outage`, unit: 'MB', module: Math.round((worst.heapPeak - worst.heapBefore) * 10) / 10 },
        { workload: 'chaos: limited+cached calls failed or slower than 1 s', unit: 'calls', module: failedCalls, goal: '0', met: failedCalls === 0 },
        { workload: 'chaos: "Unhandled error event" lines', unit: 'lines', module: unhandled, goal: '0', met: unhandled === 0 },
      ];
    } finally {
      running = false;
      clearInterval(watch);
      for (const sub of subscribers) sub.stop();
      for (const app of apps) app.child.kill('SIGKILL');
      await redis.kill();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
