/**
 * Issue 13: what observability costs on the spine's one call, in paired rounds (see pairedRounds).
 * - OTel SDK registered (batch span processor, no-op exporter; a span per request and per call,
 *   a histogram point per call) vs the same app without any SDK. Goal >= 0.85.
 * - observability on (the defaults) with no SDK registered vs observability off (the pipeline runs
 *   unobserved): "within noise", i.e. >= 0.95.
 * - reference: only the SDK's AsyncLocalStorage context manager, used once, vs no SDK.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pairedRounds, requestRate, startServer } from '../lib/harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const body = JSON.stringify({ jsonrpc: '2.0', method: 'add', params: { a: 1, b: 2 }, id: 1 });

const COMPARISONS = [
  { workload: 'one call (add): OTel SDK registered vs no SDK', module: 'sdk', baseline: 'default', goal: 0.85 },
  { workload: 'one call (add): observability on, no SDK vs off', module: 'default', baseline: 'off', goal: 0.95 },
  // Not a goal: what an SDK's AsyncLocalStorage context manager costs by itself (no span, no metric).
  { workload: 'reference: SDK context manager alone vs no SDK', module: 'context', baseline: 'default', goal: undefined },
];

export default {
  name: 'otel',
  async run({ rounds, quick }) {
    const seconds = 1;
    const pairs = quick ? 4 : rounds * 6;
    const app = join(here, '../dist/otel.app.js');
    const servers = {};
    for (const mode of ['sdk', 'default', 'off', 'context']) servers[mode] = await startServer(app, { BENCH_OTEL: mode });
    const results = [];
    try {
      for (const server of Object.values(servers)) await requestRate(`${server.url}/rpc`, body, { seconds: 1 });
      for (const c of COMPARISONS) {
        const sides = { module: servers[c.module], baseline: servers[c.baseline] };
        const measured = await pairedRounds(pairs, (side) => requestRate(`${sides[side].url}/rpc`, body, { seconds }), c.workload);
        const goal = c.goal === undefined ? { goal: '-', met: undefined } : { goal: `>= ${c.goal}`, met: measured.ratio >= c.goal };
        results.push({ workload: c.workload, unit: 'req/s', ...measured, ...goal });
      }
    } finally {
      await Promise.all(Object.values(servers).map((s) => s.stop()));
    }
    return results;
  },
};
