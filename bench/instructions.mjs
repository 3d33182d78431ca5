#!/usr/bin/env node
/**
 * `npm run bench:instructions`: the spine's request path counted in instructions instead of
 * requests per second. On a shared two-core machine rates of one server swing by 2x within a run;
 * `valgrind --tool=callgrind` counts every instruction a server process executes (its JIT and GC
 * threads included), whatever else the machine is doing.
 *
 * Each server runs alone under callgrind. It is warmed up first with 16,000 requests: under
 * valgrind a server runs ~500x slower, so the JIT is still compiling long after the point where
 * it would have settled at full speed (after 3,000 requests the next 5,000 counted ~2x the settled
 * figure; after 6,000, the next 4,000 still ~1.8x, and the following rounds kept falling for
 * another ~10,000). Then each round sends 300 unmeasured requests, zeroes the counters
 * (`callgrind_control -z`), sends 4,000 at 10 connections and dumps them (`callgrind_control -d`):
 * instructions / 4,000 is that round's figure. The figure printed is the median of the rounds (a
 * round that met a mark-compact or a recompilation reads high). Two servers run at a time.
 *
 *   --ab <refA> <refB>   the module built from two commits (`.` for the working tree), as in
 *                        `npm run bench -- --ab` (lib/ab-builds.mjs); default: the working tree
 *   --platform p         fastify (default) or express
 *   --workload w         notification (default), call or batch (the spine's batch of 20: warmed
 *                        up with 16,000 single calls, then 2,000 batches; rounds of 50 unmeasured
 *                        and 1,000 measured batches)
 *   --rounds n           measured rounds per server (default 5)
 *
 * Needs valgrind (`apt-get install valgrind`); the working tree must be built (the npm script
 * builds it).
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { prepareBuild } from './lib/ab-builds.mjs';
import { checkArguments, cliOption, median } from './lib/harness.mjs';
import { BATCH_OF_20, NOTIFICATION, ONE_CALL } from './lib/spine-bodies.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
checkArguments(args, { '--ab': 2, '--platform': 1, '--workload': 1, '--rounds': 1 }, import.meta.url);
const option = (name, count) => cliOption(args, name, count);
function fail(message) {
  console.error(message);
  process.exit(2);
}

const refs = option('--ab', 2) ?? ['.'];
const platform = option('--platform') ?? 'fastify';
if (!['fastify', 'express'].includes(platform)) fail('--platform is fastify or express');
const workload = option('--workload') ?? 'notification';
const BODIES = { notification: NOTIFICATION, call: ONE_CALL, batch: BATCH_OF_20 };
if (!(workload in BODIES)) fail('--workload is notification, call or batch');
const rounds = Number(option('--rounds') ?? 5);
if (!(Number.isInteger(rounds) && rounds > 0)) fail('--rounds is a whole number above 0');
try {
  execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
} catch {
  fail('valgrind is not installed (apt-get install -y valgrind)');
}

// A batch carries 20 calls, each batch a ~20x bigger answer: fewer requests, still enough of them
// in a round that a scavenge or two do not swing it (rounds of 200 batches read 292,000–577,000).
const callsPerRequest = workload === 'batch' ? 20 : 1;
const SINGLE_WARM_UP = 16_000;
const WARM_UP = callsPerRequest > 1 ? 2_000 : SINGLE_WARM_UP;
const UNMEASURED = callsPerRequest > 1 ? 50 : 300;
const MEASURED = callsPerRequest > 1 ? 1_000 : 4_000;
const body = BODIES[workload];

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.once('error', reject);
  });
}

function load(url, amount, payload = body) {
  return new Promise((resolve, reject) =>
    autocannon({ url, method: 'POST', headers: { 'content-type': 'application/json' }, body: payload, amount, connections: 10 }, (error, result) => {
      if (error) return reject(error);
      if (result.non2xx || result.errors) return reject(new Error(`${url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`));
      resolve(result);
    }),
  );
}

/** One server under callgrind: the instructions per request of each measured round. */
async function count(label, script, env) {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'nest-jsonrpc-instructions-'));
  const child = spawn('valgrind', ['--tool=callgrind', `--callgrind-out-file=${join(dir, 'out')}`, '--dump-instr=no', process.execPath, script], {
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr = (stderr + chunk).slice(-4000)));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    const url = `http://127.0.0.1:${port}/rpc`;
    for (let waited = 0; ; waited += 250) {
      if (child.exitCode !== null) throw new Error(`${label} exited while starting:\n${stderr}`);
      if (waited > 180_000) throw new Error(`${label} did not start within 3 minutes`);
      const up = await fetch(url, { method: 'POST' }).then(() => true, () => false);
      if (up) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    // A batch is warmed up with single calls first: the per-request path (HTTP, parse, answer)
    // needs as many requests to settle as for the other workloads, the per-item path as many calls.
    if (callsPerRequest > 1) await load(url, SINGLE_WARM_UP, ONE_CALL);
    await load(url, WARM_UP);
    const perRequest = [];
    for (let round = 1; round <= rounds; round++) {
      await load(url, UNMEASURED);
      execFileSync('callgrind_control', ['-z', String(child.pid)], { stdio: 'ignore' });
      await load(url, MEASURED);
      execFileSync('callgrind_control', ['-d', String(child.pid)], { stdio: 'ignore' });
      const dumps = readdirSync(dir).filter((f) => /^out\.\d+$/.test(f)).sort((a, b) => Number(a.slice(4)) - Number(b.slice(4)));
      const text = readFileSync(join(dir, dumps.at(-1)), 'utf8');
      const total = Number(/^(?:summary|totals): (\d+)/m.exec(text)?.[1]);
      if (!Number.isFinite(total)) throw new Error(`${label}: no total in callgrind's dump ${dumps.at(-1)}`);
      perRequest.push(Math.round(total / MEASURED));
    }
    console.error(`  ${label}: ${perRequest.join(', ')}`);
    return perRequest;
  } finally {
    child.kill('SIGKILL');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

const builds = refs.map((ref) => prepareBuild(ref, ['spine.app.ts']));
const servers = [
  { label: `Nest-${platform === 'fastify' ? 'Fastify' : 'Express'} ceiling`, script: join(here, 'baseline', 'nest-ceiling.mjs') },
  ...builds.map((build) => ({ label: `module, ${build.label}`, script: build.apps['spine.app.ts'], description: build.description })),
];
for (const build of builds) for (const note of build.notes) console.error(note);
console.error(`instructions per ${workload} on ${platform}, ${rounds} rounds of ${MEASURED} after ${WARM_UP} to warm up (${new Date().toISOString()}):`);
const results = new Map();
// Two at a time: each callgrind run is one thread of work, and this machine has two cores.
for (let i = 0; i < servers.length; i += 2) {
  const pair = servers.slice(i, i + 2);
  const counted = await Promise.all(pair.map((s) => count(s.label, s.script, { BENCH_PLATFORM: platform })));
  pair.forEach((s, j) => results.set(s.label, median(counted[j])));
}
const ceiling = results.get(servers[0].label);
console.log(`| server | instructions per ${workload} (median of ${rounds}) | / ceiling |`);
console.log('|---|---|---|');
for (const s of servers) {
  const value = results.get(s.label);
  console.log(`| ${s.label}${s.description ? ` (${s.description})` : ''} | ${value.toLocaleString('en-US')} | ${(ceiling / value).toFixed(3)} |`);
}
if (builds.length === 2) {
  const [a, b] = servers.slice(1).map((s) => results.get(s.label));
  console.log(`\nB / A (fewer instructions is better, so A / B): ${(a / b).toFixed(3)}`);
}
