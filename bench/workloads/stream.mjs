/**
 * Streaming workload:
 * - 100,000 NDJSON rows `{"i":k,"delta":"token"}` per request: rows/s of the module vs a bare
 *   Fastify route writing one row per write(), interleaved in the same run (goal >= 2.5x);
 * - the same module with all four observability options off, as a reference row: what the
 *   default observation of each row costs (bench/README.md, "Streams and the observer");
 * - time to first row on those requests (goal <= 5 ms median);
 * - a reader stalled for 10 s on an endless stream: the server's memory growth (goal < 16 MB).
 * Both servers run as child processes; the client is node:http in this process.
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, '..', 'dist');
const ROWS = 100_000;

function start(script, env = {}) {
  const child = spawn(process.execPath, ['--expose-gc', join(dist, script)], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const match = /ready (\d+)/.exec(out);
      if (match) resolve({ child, port: Number(match[1]) });
    });
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code} before it was ready`)));
  });
}

function stop(server) {
  server.child.kill('SIGTERM');
}

/** POSTs and reads the whole body; resolves with { firstRowMs, totalMs, rows }. */
function streamOnce(port, path, body) {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const started = process.hrtime.bigint();
    let firstRowMs;
    let rows = 0;
    const req = http.request(
      { host: '127.0.0.1', port, path, method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
      (res) => {
        if (res.statusCode !== 200) reject(new Error(`status ${res.statusCode}`));
        res.on('data', (chunk) => {
          for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) {
            if (rows++ === 0) firstRowMs = Number(process.hrtime.bigint() - started) / 1e6;
          }
        });
        res.on('end', () => resolve({ firstRowMs, totalMs: Number(process.hrtime.bigint() - started) / 1e6, rows }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

function rpc(port, method, params) {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify({ jsonrpc: '2.0', method, params, id: 1 });
    const req = http.request({ host: '127.0.0.1', port, path: '/rpc', method: 'POST', agent: false, headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve(JSON.parse(text).result));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Opens an endless stream, reads a little, stops reading for `stallMs`, and reports server memory growth. */
async function stalledReader(port, stallMs) {
  const before = await rpc(port, 'bench.memory');
  const payload = JSON.stringify({ jsonrpc: '2.0', method: 'bench.endless', id: 1 });
  let received = 0;
  const req = http.request({ host: '127.0.0.1', port, path: '/rpc/stream', method: 'POST', agent: false, headers: { 'content-type': 'application/json' } });
  const res = await new Promise((resolve, reject) => {
    req.on('response', resolve);
    req.on('error', reject);
    req.end(payload);
  });
  await new Promise((resolve) => {
    const onData = (chunk) => {
      received += chunk.length;
      if (received > 1 << 20) {
        res.off('data', onData);
        res.pause();
        resolve();
      }
    };
    res.on('data', onData);
  });
  await sleep(stallMs);
  const after = await rpc(port, 'bench.memory');
  req.destroy();
  await sleep(200);
  return { rssMb: (after.rss - before.rss) / 2 ** 20, heapMb: (after.heapUsed - before.heapUsed) / 2 ** 20 };
}

export default {
  name: 'stream',
  /** @param {{rounds:number, quick:boolean}} ctx */
  async run(ctx) {
    const perRound = ctx.quick ? 2 : 5;
    const [mod, base, quiet] = await Promise.all([start('stream-app.js'), start('stream-baseline.js'), start('stream-app.js', { BENCH_OBSERVABILITY: 'off' })]);
    try {
      const moduleBody = { jsonrpc: '2.0', method: 'bench.rows', params: { n: ROWS }, id: 1 };
      // Warm-up: JIT both servers before measuring.
      for (let i = 0; i < 3; i++) {
        await streamOnce(mod.port, '/rpc/stream', moduleBody);
        await streamOnce(base.port, '/stream', moduleBody);
        await streamOnce(quiet.port, '/rpc/stream', moduleBody);
      }
      const results = { module: [], baseline: [], quiet: [] };
      for (let round = 0; round < ctx.rounds; round++) {
        for (let i = 0; i < perRound; i++) {
          const m = await streamOnce(mod.port, '/rpc/stream', moduleBody);
          const b = await streamOnce(base.port, '/stream', moduleBody);
          const q = await streamOnce(quiet.port, '/rpc/stream', moduleBody);
          if (m.rows !== ROWS || b.rows !== ROWS || q.rows !== ROWS) throw new Error(`expected ${ROWS} rows, got module ${m.rows}, baseline ${b.rows}, observability off ${q.rows}`);
          results.module.push(m);
          results.baseline.push(b);
          results.quiet.push(q);
        }
        console.error(`  round ${round + 1}: module ${(ROWS / (median(results.module.map((r) => r.totalMs)) / 1000)).toFixed(0)} rows/s, baseline ${(ROWS / (median(results.baseline.map((r) => r.totalMs)) / 1000)).toFixed(0)} rows/s`);
      }
      const rowsPerSecond = (runs) => ROWS / (median(runs.map((r) => r.totalMs)) / 1000);
      const moduleRps = rowsPerSecond(results.module);
      const baselineRps = rowsPerSecond(results.baseline);
      const quietRps = rowsPerSecond(results.quiet);
      const moduleTtfr = median(results.module.map((r) => r.firstRowMs));
      const baselineTtfr = median(results.baseline.map((r) => r.firstRowMs));
      const stall = await stalledReader(mod.port, ctx.quick ? 3000 : 10_000);
      console.error(`  stalled reader: rss ${stall.rssMb.toFixed(2)} MB, heap ${stall.heapMb.toFixed(2)} MB`);
      return [
        {
          workload: 'ndjson 100k rows',
          unit: 'rows/s',
          module: Math.round(moduleRps),
          baseline: Math.round(baselineRps),
          ratio: moduleRps / baselineRps,
          goal: '>= 2.5',
          met: moduleRps / baselineRps >= 2.5,
        },
        {
          workload: 'ndjson 100k rows, observability off (reference)',
          unit: 'rows/s',
          module: Math.round(quietRps),
          baseline: Math.round(baselineRps),
          ratio: quietRps / baselineRps,
          goal: '-',
          met: undefined,
        },
        {
          workload: 'ndjson time to first row',
          unit: 'ms (median)',
          module: moduleTtfr,
          baseline: baselineTtfr,
          ratio: moduleTtfr / baselineTtfr,
          goal: '<= 5 ms',
          met: moduleTtfr <= 5,
        },
        {
          workload: `stalled reader ${ctx.quick ? 3 : 10} s, endless stream`,
          unit: 'MB rss growth',
          module: stall.rssMb,
          baseline: null,
          ratio: null,
          goal: '< 16 MB',
          met: stall.rssMb < 16,
        },
      ];
    } finally {
      stop(mod);
      stop(base);
      stop(quiet);
    }
  },
};
