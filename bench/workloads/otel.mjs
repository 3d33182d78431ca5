/**
 * What observability costs on the spine's one call, in paired rounds (see pairedRounds).
 * - OTel SDK registered (batch span processor, no-op exporter; a span per request and per call,
 *   a histogram point per call) vs the same app without any SDK. Goal >= 0.85.
 * - observability on (the defaults) with no SDK registered vs observability off (the pipeline runs
 *   unobserved): "within noise", i.e. >= 0.95.
 * - reference: only the SDK's AsyncLocalStorage context manager, used once, vs no SDK.
 * - reference: the floor — bare Fastify recording a span and a histogram point per request by
 *   hand (apps/otel-floor.app.ts), with the same SDK vs without: what the SDK itself costs.
 * Each comparison is measured twice: as request rate (autocannon flat out, as every workload), and
 * as requests per CPU-second of the server process at a fixed 2,000 req/s (Linux /proc). The
 * second is the steadier one on a shared machine: it does not depend on how much CPU the server
 * got, only on how much it spent per request.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import autocannon from 'autocannon';
import { fileURLToPath } from 'node:url';
import { cpuTicks, pairedRounds, requestRate, startServer } from '../lib/harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const body = JSON.stringify({ jsonrpc: '2.0', method: 'add', params: { a: 1, b: 2 }, id: 1 });

const COMPARISONS = [
  { workload: 'one call (add): OTel SDK registered vs no SDK', module: 'sdk', baseline: 'default', goal: 0.85 },
  { workload: 'one call (add): observability on, no SDK vs off', module: 'default', baseline: 'off', goal: 0.95 },
  // Not a goal: what an SDK's AsyncLocalStorage context manager costs by itself (no span, no metric).
  { workload: 'reference: SDK context manager alone vs no SDK', module: 'context', baseline: 'default', goal: undefined },
  // Not a goal: the floor — bare Fastify recording by hand what the module records per call
  // (a span, active in the handler, and a histogram point), with the SDK vs without.
  { workload: 'reference: bare Fastify, a span + a point by hand, SDK vs none', module: 'floor-sdk', baseline: 'floor-default', goal: undefined },
];

/** Requests the server answers per second of its own CPU, at a fixed request rate. */
async function requestsPerCpuSecond(server, seconds) {
  const before = cpuTicks(server.child.pid);
  const result = await autocannon({
    url: `${server.url}/rpc`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    duration: seconds,
    connections: 20,
    overallRate: 2000,
  });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${server.url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  const cpuSeconds = (cpuTicks(server.child.pid) - before) / 100;
  return result.requests.total / cpuSeconds;
}

export default {
  name: 'otel',
  async run({ rounds, quick }) {
    const seconds = 1;
    const pairs = quick ? 4 : rounds * 6;
    const app = join(here, '../dist/otel.app.js');
    const floor = join(here, '../dist/otel-floor.app.js');
    const servers = {};
    for (const mode of ['sdk', 'default', 'off', 'context']) servers[mode] = await startServer(app, { BENCH_OTEL: mode });
    for (const mode of ['sdk', 'default']) servers[`floor-${mode}`] = await startServer(floor, { BENCH_OTEL: mode });
    const results = [];
    try {
      for (const server of Object.values(servers)) await requestRate(`${server.url}/rpc`, body, { seconds: 1 });
      for (const c of COMPARISONS) {
        const sides = { module: servers[c.module], baseline: servers[c.baseline] };
        const measured = await pairedRounds(pairs, (side) => requestRate(`${sides[side].url}/rpc`, body, { seconds }), c.workload);
        const goal = c.goal === undefined ? { goal: '-', met: undefined } : { goal: `>= ${c.goal}`, met: measured.ratio >= c.goal };
        results.push({ workload: c.workload, unit: 'req/s', ...measured, ...goal });
        if (!existsSync('/proc/self/stat')) continue;
        const cpu = await pairedRounds(Math.max(4, pairs >> 1), (side) => requestsPerCpuSecond(sides[side], 3), `${c.workload} (CPU)`);
        const cpuGoal = c.goal === undefined ? { goal: '-', met: undefined } : { goal: `>= ${c.goal}`, met: cpu.ratio >= c.goal };
        results.push({ workload: `${c.workload}, per CPU-second at 2k req/s`, unit: 'req/CPU-s', ...cpu, ...cpuGoal });
      }
    } finally {
      await Promise.all(Object.values(servers).map((s) => s.stop()));
    }
    return results;
  },
};
