/**
 * Durable streams:
 * 1. events persisted per second by one durable stream on the SQLite store (timed by the stored
 *    record: created_at -> completed_at), against a raw better-sqlite3 loop doing grouped inserts
 *    of the same rows (bench/dist/durable-sqlite-baseline.js) — interleaved rounds, medians.
 *    Goal: module >= 0.5x the raw loop.
 * 2. server memory per idle attached SSE subscriber, 2,000 subscribers on one running stream
 *    (RSS delta after GC / 2,000), beside bare Fastify holding as many idle SSE responses.
 *    Goal: < 30 KB each.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const dist = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist');
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function startChild(script, args = [], env = {}) {
  const child = spawn(process.execPath, ['--expose-gc', join(dist, script), ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...env },
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const m = /LISTENING (\d+)/.exec(out);
      if (m) resolve({ child, url: `http://127.0.0.1:${m[1]}` });
    });
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}: ${out}`)));
  });
}

function runToEnd(script, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(dist, script), ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`${script} exited with ${code}`))));
  });
}

async function json(url, init) {
  const res = await fetch(url, init);
  return res.json();
}

async function moduleThroughput(url, n) {
  const started = await json(`${url}/rpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'bench.events', params: { n }, id: 1 }),
  });
  const id = started.result.stream_id;
  for (;;) {
    const record = await json(`${url}/__stream/${id}`);
    if (record && record.status !== 'running') {
      if (record.events !== n + 1) throw new Error(`expected ${n + 1} events, stored ${record.events}`);
      return n / ((record.completedAt - record.createdAt) / 1000);
    }
    await sleep(20);
  }
}

/** Opens `count` SSE responses and resolves once each has received its first bytes. */
async function holdSse(url, count) {
  const sockets = [];
  const batch = 200;
  for (let k = 0; k < count; k += batch) {
    await Promise.all(
      Array.from({ length: Math.min(batch, count - k) }, () =>
        new Promise((resolve, reject) => {
          const req = request(url, { agent: false, headers: { accept: 'text/event-stream' } }, (res) => {
            if (res.statusCode !== 200) reject(new Error(`status ${res.statusCode}`));
            res.once('data', () => resolve());
            res.on('error', () => undefined);
          });
          req.on('error', reject);
          req.end();
          sockets.push(req);
        }),
      ),
    );
  }
  return () => sockets.forEach((req) => req.destroy());
}

async function memoryPerSubscriber(server, sseUrl, count) {
  const before = await json(`${server}/__mem`);
  const release = await holdSse(sseUrl, count);
  await sleep(500);
  const after = await json(`${server}/__mem`);
  release();
  return { rss: (after.rss - before.rss) / count / 1024, heap: (after.heapUsed - before.heapUsed) / count / 1024 };
}

export default {
  name: 'durable',
  async run({ rounds, quick }) {
    const n = quick ? 50_000 : 200_000;
    const subscribers = 2000;
    const dir = mkdtempSync(join(tmpdir(), 'bench-durable-'));
    const rows = [];
    try {
      const mod = [];
      const base = [];
      const app = await startChild('durable-app.js', [], { DURABLE_DB: join(dir, 'module.sqlite') });
      try {
        await moduleThroughput(app.url, 10_000); // warm-up
        await runToEnd('durable-sqlite-baseline.js', [join(dir, 'warm.sqlite'), '10000']);
        for (let r = 0; r < rounds; r++) {
          mod.push(await moduleThroughput(app.url, n));
          const raw = await runToEnd('durable-sqlite-baseline.js', [join(dir, `raw-${r}.sqlite`), String(n)]);
          base.push(raw.events / (raw.ms / 1000));
          console.error(`  round ${r + 1}: module ${Math.round(mod.at(-1))} events/s, raw better-sqlite3 ${Math.round(base.at(-1))} events/s`);
        }
        const m = median(mod);
        const b = median(base);
        rows.push({ workload: `durable: ${n} events persisted (SQLite)`, unit: 'events/s', module: Math.round(m), baseline: Math.round(b), ratio: m / b, goal: '>= 0.5', met: m / b >= 0.5 });

        const idle = await json(`${app.url}/rpc`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ jsonrpc: '2.0', method: 'bench.idle', id: 2 }),
        });
        const modMem = await memoryPerSubscriber(app.url, `${app.url}${idle.result.sse_url}`, subscribers);
        const bare = await startChild('durable-sse-baseline.js');
        let bareMem;
        try {
          bareMem = await memoryPerSubscriber(bare.url, `${bare.url}/sse`, subscribers);
        } finally {
          bare.child.kill();
        }
        console.error(`  memory per idle subscriber: module rss ${modMem.rss.toFixed(1)} KB (heap ${modMem.heap.toFixed(1)} KB), bare Fastify rss ${bareMem.rss.toFixed(1)} KB (heap ${bareMem.heap.toFixed(1)} KB)`);
        // The larger of the RSS and heap deltas: RSS alone can hide heap growth into space already reserved.
        const modKb = Math.max(modMem.rss, modMem.heap);
        const bareKb = Math.max(bareMem.rss, bareMem.heap);
        rows.push({ workload: `durable: memory per idle SSE subscriber (${subscribers})`, unit: 'KB', module: modKb, baseline: bareKb, ratio: modKb / bareKb, goal: '< 30 KB', met: modKb < 30 });
      } finally {
        app.child.kill();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    return rows;
  },
};
