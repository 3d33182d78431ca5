/**
 * The spine workloads: one call, a batch of 20, a notification and a 1 MB payload, served by the
 * module and by baselines doing the same JSON-RPC dispatch (baseline/rpc-dispatch.mjs), on Fastify
 * and on Express, in alternating rounds (see alternatingRounds). `runAb` measures the module built
 * from two commits instead (lib/ab-builds.mjs).
 */
import { isDeepStrictEqual } from 'node:util';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { answer } from '../baseline/rpc-dispatch.mjs';
import { prepareBuild } from '../lib/ab-builds.mjs';
import { alternatingRounds, loadSlice, pairedRounds, requestRate, startServer } from '../lib/harness.mjs';
import { BATCH_OF_20, NOTIFICATION, ONE_CALL, ONE_MB_ECHO } from '../lib/spine-bodies.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const baseline = (file) => join(here, '..', 'baseline', file);
const dist = (file) => join(here, '..', 'dist', file);

/**
 * `ceiling`: the goal against the Nest app's own instance (the raw route of nest-ceiling.mjs) on
 * either platform; `bare`: the goal against bare Fastify, kept from the first benchmark.
 */
const WORKLOADS = [
  { workload: 'one call (add)', body: ONE_CALL, ceiling: 0.97, bare: 0.9 },
  { workload: 'batch of 20', body: BATCH_OF_20, ceiling: 0.97, bare: 0.9 },
  { workload: 'notification', body: NOTIFICATION, ceiling: 0.97, bare: 0.9 },
  { workload: '1 MB payload (echo)', body: ONE_MB_ECHO, ceiling: 0.95, bare: 0.95, connections: 10 },
];

/** The servers of the spine workloads; `name` is how the rows call them. */
const SERVERS = {
  bare: { name: 'bare Fastify', script: baseline('bare-rpc.mjs') },
  fastifyModule: { name: 'module (Fastify)', script: dist('spine.app.js'), env: { BENCH_PLATFORM: 'fastify' } },
  fastifyCeiling: { name: 'Nest-Fastify ceiling', script: baseline('nest-ceiling.mjs'), env: { BENCH_PLATFORM: 'fastify' } },
  fastifyController: { name: 'plain Nest @Controller (Fastify)', script: dist('plain-controller.js'), env: { BENCH_PLATFORM: 'fastify' } },
  expressCeiling: { name: 'Nest-Express ceiling', script: baseline('nest-ceiling.mjs'), env: { BENCH_PLATFORM: 'express' } },
  expressMinimal: {
    name: 'Nest-Express minimal raw route',
    script: baseline('nest-ceiling.mjs'),
    env: { BENCH_PLATFORM: 'express', BENCH_EXPRESS_ROUTE: 'minimal' },
  },
  expressModule: { name: 'module on Express', script: dist('spine.app.js'), env: { BENCH_PLATFORM: 'express' } },
  expressController: { name: 'plain Nest @Controller (Express)', script: dist('plain-controller.js'), env: { BENCH_PLATFORM: 'express' } },
};

/** What a build that predates the Express adapter says when started on ExpressAdapter. */
const FASTIFY_ONLY = /JsonRpcModule needs @nestjs\/platform-fastify/;

/**
 * Starts a module app on Express; `undefined` when the build refuses Express at startup (the
 * modules before the Express adapter). Any other failure fails the run.
 */
async function startModuleOnExpress(script) {
  try {
    return await startServer(script, { BENCH_PLATFORM: 'express' }, { quiet: true });
  } catch (error) {
    if (FASTIFY_ONLY.test(error.stderr ?? '')) return undefined;
    throw error;
  }
}

/**
 * Every server must give the dispatch's own answer to every body before it is measured (the
 * load generator only checks for 2xx): the same JSON, 200, or an empty 204 for the notification.
 */
async function checkAnswers(name, url) {
  for (const w of WORKLOADS) {
    const res = await fetch(`${url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: w.body });
    const text = await res.text();
    const expected = answer(JSON.parse(w.body));
    const ok = expected === undefined ? res.status === 204 && text === '' : res.status === 200 && isDeepStrictEqual(JSON.parse(text), expected);
    if (!ok) throw new Error(`${name} answered ${w.workload} with ${res.status} ${text.slice(0, 200)}`);
  }
}

/**
 * Slice length, rounds, warm-up, and how many fresh server processes each workload's rounds are
 * spread over: many short slices, since this machine's speed drifts over seconds; several
 * processes, since one Node process can settle into a slower JIT state for its whole life (see
 * "One process is one draw" in bench/README.md): the rounds of each process are pooled, so the
 * median is over processes as well as over time.
 */
function pacing({ rounds, quick, processes }) {
  return quick ? { seconds: 0.5, rounds: 2, warmup: 0.5, processes: 1 } : { seconds: 1, rounds: rounds * 6, warmup: 1, processes: processes ?? 3 };
}

/**
 * Measures each workload on every server of `order` in alternating rounds and turns each
 * comparison `{ num, den, workload: (w) => row name, goal: (w) => number, beat }` into rows over
 * the four workloads (`beat`: the goal is a ratio above it, not at least it): the request rates,
 * then the requests per second of server CPU (Linux only). Goals are judged on the rates.
 */
async function measureRows(servers, starters, order, comparisons, { seconds, rounds, warmup, processes }) {
  const rows = comparisons.map(() => ({ rate: [], perCpu: [] }));
  const perProcess = Math.ceil(rounds / Math.max(1, processes));
  for (const w of WORKLOADS) {
    const connections = w.connections ?? 50;
    // Let every JIT settle on this body before anything is measured.
    const warm = async () => {
      for (const side of order) await requestRate(`${servers[side].url}/rpc`, w.body, { seconds: warmup, connections });
    };
    await warm();
    // Every `perProcess` rounds, each server is replaced by a fresh process (warmed up again).
    const beforeRound = async (round) => {
      if (round === 0 || round % perProcess !== 0) return;
      console.error(`  ${w.workload}: fresh server processes`);
      for (const side of order) {
        await servers[side].stop();
        servers[side] = await starters[side]();
      }
      await warm();
    };
    const measured = await alternatingRounds(
      rounds,
      order,
      (side) => loadSlice(servers[side], w.body, { seconds, connections }),
      comparisons.map((c) => [c.num, c.den]),
      w.workload,
      { beforeRound },
    );
    comparisons.forEach((c, i) => {
      const { rate, perCpu } = measured.ratios[i];
      const goal = c.goal?.(w);
      const row = { workload: c.workload(w), unit: 'req/s', ...rate, goal: '-', met: undefined };
      if (goal !== undefined) Object.assign(row, { goal: `${c.beat ? '>' : '>='} ${goal}`, met: c.beat ? rate.ratio > goal : rate.ratio >= goal });
      rows[i].rate.push(row);
      if (perCpu) rows[i].perCpu.push({ workload: `${c.workload(w)}, per server CPU-second`, unit: 'req/CPU-s', ...perCpu, goal: '-', met: undefined });
    });
  }
  // Grouped by comparison: its rates over the four workloads, then its CPU figures.
  return rows.flatMap((r) => [...r.rate, ...r.perCpu]);
}

/** A comparison of two servers of SERVERS, its rows named "<workload>: <num> / <den>". */
function compare(num, den, { goal, beat = false } = {}) {
  return { num, den, goal, beat, workload: (w) => `${w.workload}: ${SERVERS[num].name} / ${SERVERS[den].name}` };
}

/**
 * Not a goal: an empty 204 route inside a Nest app (no module) vs bare Fastify. Whatever the
 * module does, its ratio cannot beat this one, since its routes live in the same Nest app.
 */
async function nestAdapterFloor({ seconds, rounds, warmup }) {
  const body = NOTIFICATION;
  const nest = await startServer(baseline('nest-empty.mjs'));
  const bare = await startServer(baseline('bare-empty.mjs'));
  try {
    for (const server of [nest, bare]) await requestRate(`${server.url}/rpc`, body, { seconds: warmup });
    const servers = { module: nest, baseline: bare };
    const measured = await pairedRounds(rounds, (side) => requestRate(`${servers[side].url}/rpc`, body, { seconds }), 'nest floor');
    return { workload: 'reference: empty 204 route in a Nest app, no module', unit: 'req/s', ...measured, goal: '-', met: undefined };
  } finally {
    await Promise.all([nest.stop(), bare.stop()]);
  }
}

async function stopAll(servers) {
  await Promise.all(Object.values(servers).map((server) => server?.stop()));
}

/** A row that carries only its text (a note in the table). */
const note = (text) => ({ workload: text, unit: '-', module: null, baseline: null, ratio: null, goal: '-', met: undefined });

export default {
  name: 'spine',
  /**
   * The module against its baselines in one run. On Fastify: the Nest-Fastify ceiling (goal),
   * bare Fastify (the first benchmark's goal) and a plain @Controller (reference). On Express:
   * the Nest-Express ceiling (goal) and the plain Express @Controller (goal: ahead of it).
   * `platforms` picks either or both.
   */
  async run({ rounds, quick, processes, platforms = ['fastify', 'express'] }) {
    const pace = pacing({ rounds, quick, processes });
    const servers = {};
    const results = [];
    try {
      const wanted = [
        ...(platforms.includes('fastify') ? ['bare', 'fastifyModule', 'fastifyCeiling', 'fastifyController'] : []),
        ...(platforms.includes('express') ? ['expressMinimal', 'expressCeiling', 'expressController'] : []),
      ];
      const starters = Object.fromEntries(wanted.map((side) => [side, () => startServer(SERVERS[side].script, SERVERS[side].env)]));
      starters.expressModule = () => startModuleOnExpress(SERVERS.expressModule.script);
      for (const side of wanted) servers[side] = await starters[side]();
      if (platforms.includes('express')) {
        servers.expressModule = await starters.expressModule();
        if (!servers.expressModule) {
          delete servers.expressModule;
          results.push(note('module on Express: not supported by this build'));
          console.error('  module on Express: not supported by this build (it refuses ExpressAdapter at startup); its rows are left out');
        }
      }
      for (const [side, server] of Object.entries(servers)) await checkAnswers(SERVERS[side].name, server.url);

      // The order of one round: each comparison with a goal is between neighbours (their slices
      // ran back to back); the references further apart are printed for orientation.
      const order = ['bare', 'fastifyModule', 'fastifyCeiling', 'fastifyController', 'expressMinimal', 'expressCeiling', 'expressModule', 'expressController'].filter(
        (side) => servers[side],
      );
      const has = (...sides) => sides.every((side) => servers[side]);
      const comparisons = [
        has('fastifyModule', 'fastifyCeiling') && compare('fastifyModule', 'fastifyCeiling', { goal: (w) => w.ceiling }),
        has('fastifyModule', 'bare') && compare('fastifyModule', 'bare', { goal: (w) => w.bare }),
        has('fastifyController', 'fastifyCeiling') && compare('fastifyController', 'fastifyCeiling'),
        has('expressModule', 'expressCeiling') && compare('expressModule', 'expressCeiling', { goal: (w) => w.ceiling }),
        has('expressModule', 'expressController') && compare('expressModule', 'expressController', { goal: () => 1, beat: true }),
        has('expressController', 'expressCeiling') && compare('expressController', 'expressCeiling'),
        has('expressMinimal', 'expressCeiling') && compare('expressMinimal', 'expressCeiling'),
        has('expressModule', 'fastifyModule') && compare('expressModule', 'fastifyModule'),
        has('expressCeiling', 'fastifyCeiling') && compare('expressCeiling', 'fastifyCeiling'),
      ].filter(Boolean);
      results.push(...(await measureRows(servers, starters, order, comparisons, pace)));
    } finally {
      await stopAll(servers);
    }
    if (platforms.includes('fastify')) results.push(await nestAdapterFloor(pace));
    return results;
  },

  /**
   * The A/B mode: the same spine app built against two commits (`.` for the working tree),
   * alternating with the platform's Nest ceiling in every round. Rows: B / A, and each build
   * against the ceiling, on Fastify and, when both builds serve Express, on Express.
   */
  async runAb({ rounds, quick, processes, platforms = ['fastify', 'express'], ab: [refA, refB] }) {
    const pace = pacing({ rounds, quick, processes });
    const builds = { A: prepareBuild(refA, ['spine.app.ts']), B: prepareBuild(refB, ['spine.app.ts']) };
    for (const build of Object.values(builds)) for (const text of build.notes) console.error(`  NOTE ${text}`);
    // A commit's own bench app knows nothing of BENCH_PLATFORM: it is measured on Fastify only.
    const own = (side) => builds[side].ownApps.includes('spine.app.ts');
    const legend = `A/B builds: A = ${builds.A.label}: ${builds.A.description}; B = ${builds.B.label}: ${builds.B.description}`;
    console.error(`  ${legend}`);
    const results = [note(legend)];
    for (const side of ['A', 'B'].filter(own)) {
      results.push(note(`${side} (${builds[side].label}) runs its own bench/apps/spine.app.ts: today's does not compile against it (the reason is printed above the table)`));
    }
    for (const platform of platforms) {
      const servers = {};
      const names = { ceiling: platform === 'fastify' ? 'Nest-Fastify ceiling' : 'Nest-Express ceiling', A: builds.A.label, B: builds.B.label };
      const starters = { ceiling: () => startServer(baseline('nest-ceiling.mjs'), { BENCH_PLATFORM: platform }) };
      for (const side of ['A', 'B']) {
        const app = builds[side].apps['spine.app.ts'];
        if (platform === 'fastify') starters[side] = () => startServer(app, { BENCH_PLATFORM: 'fastify' });
        else if (!own(side)) starters[side] = () => startModuleOnExpress(app);
      }
      try {
        for (const side of ['ceiling', 'A', 'B']) if (starters[side]) servers[side] = await starters[side]();
        if (!servers.A || !servers.B) {
          const why = (side) => `${names[side]} ${own(side) ? 'runs its own bench app, on Fastify only' : 'does not serve Express'}`;
          const row = `A/B on Express: left out, ${['A', 'B'].filter((side) => !servers[side]).map(why).join('; ')}`;
          results.push(note(row));
          console.error(`  ${row}`);
          continue;
        }
        for (const [side, server] of Object.entries(servers)) await checkAnswers(names[side], server.url);
        const on = platform === 'fastify' ? '' : ' on Express';
        const comparison = (num, den) => ({ num, den, workload: (w) => `${w.workload}${on}: ${names[num]} / ${names[den]}` });
        results.push(...(await measureRows(servers, starters, ['ceiling', 'A', 'B'], [comparison('B', 'A'), comparison('A', 'ceiling'), comparison('B', 'ceiling')], pace)));
      } finally {
        await stopAll(servers);
      }
    }
    return results;
  },
};
