/**
 * Issue 2's workloads: one call, a batch of 20, a notification and a 1 MB payload, module vs a
 * bare-Fastify JSON-RPC dispatch, rounds interleaved (and the order flipped each round).
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, requestRate, startServer } from '../lib/harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));

const batch20 = JSON.stringify(
  Array.from({ length: 20 }, (_, i) =>
    i % 2 ? { jsonrpc: '2.0', method: 'add', params: { a: i, b: 1 }, id: i } : { jsonrpc: '2.0', method: 'echo', params: { i }, id: i },
  ),
);
const oneMb = JSON.stringify({ jsonrpc: '2.0', method: 'echo', params: { blob: 'x'.repeat(1024 * 1024 - 100) }, id: 1 });

const WORKLOADS = [
  { workload: 'one call (add)', body: JSON.stringify({ jsonrpc: '2.0', method: 'add', params: { a: 1, b: 2 }, id: 1 }), goal: 0.9 },
  { workload: 'batch of 20', body: batch20, goal: 0.9 },
  { workload: 'notification', body: JSON.stringify({ jsonrpc: '2.0', method: 'add', params: { a: 1, b: 2 } }), goal: 0.9 },
  { workload: '1 MB payload (echo)', body: oneMb, goal: 0.95, connections: 10 },
];

export default {
  name: 'spine',
  async run({ rounds, quick }) {
    const seconds = quick ? 2 : 5;
    const bare = await startServer(join(here, '../baseline/bare-rpc.mjs'));
    const mod = await startServer(join(here, '../dist/spine.app.js'));
    const samples = WORKLOADS.map(() => ({ module: [], baseline: [] }));
    try {
      // Let both JITs settle on every body before anything is measured.
      for (const w of WORKLOADS) {
        for (const server of [mod, bare]) await requestRate(`${server.url}/rpc`, w.body, { seconds: 1, connections: w.connections ?? 50 });
      }
      for (let round = 0; round < rounds; round++) {
        for (const [i, w] of WORKLOADS.entries()) {
          const order = round % 2 ? [['baseline', bare], ['module', mod]] : [['module', mod], ['baseline', bare]];
          for (const [side, server] of order) {
            const rate = await requestRate(`${server.url}/rpc`, w.body, { seconds, connections: w.connections ?? 50 });
            samples[i][side].push(rate);
            console.error(`  round ${round + 1} ${w.workload} ${side}: ${rate.toFixed(0)} req/s`);
          }
        }
      }
    } finally {
      await Promise.all([bare.stop(), mod.stop()]);
    }
    return WORKLOADS.map((w, i) => {
      const module = median(samples[i].module);
      const baseline = median(samples[i].baseline);
      const ratio = module / baseline;
      return { workload: w.workload, unit: 'req/s', module, baseline, ratio, goal: `>= ${w.goal}`, met: ratio >= w.goal };
    });
  },
};
