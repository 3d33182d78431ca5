/**
 * The spine's request workloads measured side by side: two servers pinned to the same core and
 * loaded at the same time, each by its own load generator pinned to the other core. Whatever the
 * machine does meanwhile (a neighbour, a slower second, a frequency change) it does to both, so
 * the ratio of their CPU per request holds steady where sequential 1 s rates swing by ±10 %
 * (bench/README.md, "Side by side"). Rows: per server CPU-second, module / Nest ceiling per
 * platform, and an A/A row — the ceiling against itself — whose distance from 1 is the noise of
 * the method. `runAb`: build A against build B the same way.
 *
 * Each pair runs in `processes` pairs of fresh processes (default 3); the two servers swap which
 * one starts and is loaded first in every other pair, so neither side has the better seat.
 * Linux only (`taskset`, /proc): elsewhere its rows say it was left out.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { prepareBuild } from '../lib/ab-builds.mjs';
import { cpuTicks, median, startServer } from '../lib/harness.mjs';
import { BATCH_OF_20, NOTIFICATION, ONE_CALL } from '../lib/spine-bodies.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const baseline = (file) => join(here, '..', 'baseline', file);
const dist = (file) => join(here, '..', 'dist', file);
const AUTOCANNON = join(here, '..', '..', 'node_modules', 'autocannon', 'autocannon.js');
const SERVER_CORE = '0';
const LOAD_CORE = '1';
/** What a build that predates the Express adapter says when started on ExpressAdapter. */
const FASTIFY_ONLY = /JsonRpcModule needs @nestjs\/platform-fastify/;
/** Fewer connections than the rate rows: two servers share one core, each needs only to stay busy. */
const CONNECTIONS = 10;

const WORKLOADS = [
  { workload: 'one call (add)', body: ONE_CALL },
  { workload: 'batch of 20', body: BATCH_OF_20 },
  { workload: 'notification', body: NOTIFICATION },
];

function usable() {
  if (!existsSync('/proc/self/stat')) return 'no /proc';
  try {
    execFileSync('taskset', ['-c', LOAD_CORE, 'true'], { stdio: 'ignore' });
    return undefined;
  } catch {
    return 'no taskset, or fewer than 2 cores';
  }
}

/** Requests answered in `seconds` of load from autocannon, pinned to the load core. */
function load(url, body, seconds) {
  return new Promise((resolve, reject) => {
    const args = ['-c', LOAD_CORE, process.execPath, AUTOCANNON, '-j', '-c', String(CONNECTIONS), '-d', String(seconds), '-m', 'POST'];
    args.push('-H', 'content-type=application/json', '-b', body, `${url}/rpc`);
    const child = spawn('taskset', args, { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.on('error', reject);
    child.on('exit', () => {
      const result = JSON.parse(out);
      if (result.non2xx > 0 || result.errors > 0) reject(new Error(`${url}/rpc: ${result.non2xx} non-2xx answers, ${result.errors} errors`));
      else resolve(result.requests.total);
    });
  });
}

/** Starts `side` and pins every thread of it to the server core. */
async function startPinned(side) {
  const server = await startServer(side.script, side.env);
  execFileSync('taskset', ['-apc', SERVER_CORE, String(server.child.pid)], { stdio: 'ignore' });
  return server;
}

/**
 * `num` against `den` on one body: per slice, the µs of server CPU per request of each, loaded
 * together; the ratio is den's CPU per request over num's (above 1: num is cheaper), the median
 * over every slice of every pair of processes.
 */
async function sideBySide(num, den, body, { processes, slices, seconds, warmup }) {
  const ratios = [];
  for (let pair = 0; pair < processes; pair++) {
    const order = pair % 2 ? [den, num] : [num, den];
    const servers = [];
    try {
      for (const side of order) servers.push(await startPinned(side));
      await Promise.all(servers.map((server) => load(server.url, body, warmup)));
      for (let slice = 0; slice < slices; slice++) {
        const before = servers.map((server) => cpuTicks(server.child.pid));
        const answered = await Promise.all(servers.map((server) => load(server.url, body, seconds)));
        const perRequest = servers.map((server, i) => (cpuTicks(server.child.pid) - before[i]) / answered[i]);
        const [numCost, denCost] = order[0] === num ? perRequest : [perRequest[1], perRequest[0]];
        ratios.push(denCost / numCost);
      }
    } finally {
      await Promise.all(servers.map((server) => server.stop()));
    }
  }
  return { ratio: median(ratios), low: Math.min(...ratios), high: Math.max(...ratios), slices: ratios.length };
}

function pacing({ rounds, quick, processes }) {
  return quick ? { processes: 2, slices: 1, seconds: 1, warmup: 1 } : { processes: processes ?? 3, slices: rounds, seconds: 3, warmup: 3 };
}

function row(label, result) {
  console.error(`  ${label}: ${result.ratio.toFixed(3)} (slices ${result.low.toFixed(3)}–${result.high.toFixed(3)}, ${result.slices} of them)`);
  return { workload: `${label} (slices ${result.low.toFixed(3)}–${result.high.toFixed(3)})`, unit: 'CPU per request, side by side', module: null, baseline: null, ratio: result.ratio };
}

const note = (workload) => ({ workload, unit: '-', module: null, baseline: null, ratio: null });

const ceiling = (platform) => ({ name: `Nest-${platform === 'fastify' ? 'Fastify' : 'Express'} ceiling`, script: baseline('nest-ceiling.mjs'), env: { BENCH_PLATFORM: platform } });

export default {
  name: 'side-by-side',

  /** The module against the Nest ceiling of each platform, and the ceiling against itself (A/A). */
  async run({ rounds, quick, processes, platforms = ['fastify', 'express'] }) {
    const why = usable();
    if (why) return [note(`side by side: left out (${why})`)];
    const pace = pacing({ rounds, quick, processes });
    const rows = [];
    for (const platform of platforms) {
      const module = { name: `module (${platform === 'fastify' ? 'Fastify' : 'Express'})`, script: dist('spine.app.js'), env: { BENCH_PLATFORM: platform } };
      for (const w of WORKLOADS) {
        rows.push(row(`${w.workload}: ${module.name} / ${ceiling(platform).name}`, await sideBySide(module, ceiling(platform), w.body, pace)));
        rows.push(row(`${w.workload}: A/A, ${ceiling(platform).name} / itself`, await sideBySide(ceiling(platform), ceiling(platform), w.body, pace)));
      }
    }
    return rows;
  },

  /** Build B against build A (`--ab`), on each platform both builds serve. */
  async runAb({ rounds, quick, processes, platforms = ['fastify', 'express'], ab: [refA, refB] }) {
    const why = usable();
    if (why) return [note(`side by side: left out (${why})`)];
    const pace = pacing({ rounds, quick, processes });
    const builds = { A: prepareBuild(refA, ['spine.app.ts']), B: prepareBuild(refB, ['spine.app.ts']) };
    const rows = [];
    for (const platform of platforms) {
      const owns = Object.values(builds).some((build) => build.ownApps.includes('spine.app.ts'));
      if (platform === 'express' && owns) {
        rows.push(note('side by side on Express: left out (a build runs its own bench app, which serves Fastify only)'));
        continue;
      }
      const side = (key) => ({ name: builds[key].label, script: builds[key].apps['spine.app.ts'], env: { BENCH_PLATFORM: platform } });
      const on = platform === 'fastify' ? '' : ' on Express';
      try {
        for (const w of WORKLOADS) {
          rows.push(row(`${w.workload}${on}: ${builds.B.label} / ${builds.A.label}`, await sideBySide(side('B'), side('A'), w.body, pace)));
        }
      } catch (error) {
        if (!FASTIFY_ONLY.test(error.stderr ?? '')) throw error;
        rows.push(note('side by side on Express: left out (a build refuses ExpressAdapter at startup)'));
      }
    }
    return rows;
  },
};
