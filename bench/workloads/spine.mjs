/**
 * Issue 2's workloads: one call, a batch of 20, a notification and a 1 MB payload, module vs a
 * bare-Fastify JSON-RPC dispatch, in paired rounds (see pairedRounds).
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pairedRounds, requestRate, startServer } from '../lib/harness.mjs';

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

/**
 * Not a goal: an empty 204 route inside a Nest app (no module) vs bare Fastify. Whatever the
 * module does, its ratio cannot beat this one, since its routes live in the same Nest app.
 */
async function nestAdapterFloor(seconds, pairs) {
  const body = JSON.stringify({ jsonrpc: '2.0', method: 'add', params: { a: 1, b: 2 } });
  const nest = await startServer(join(here, '../baseline/nest-empty.mjs'));
  const bare = await startServer(join(here, '../baseline/bare-empty.mjs'));
  try {
    for (const server of [nest, bare]) await requestRate(`${server.url}/rpc`, body, { seconds: 1 });
    const servers = { module: nest, baseline: bare };
    const measured = await pairedRounds(pairs, (side) => requestRate(`${servers[side].url}/rpc`, body, { seconds }), 'nest floor');
    return { workload: 'reference: empty 204 route in a Nest app, no module', unit: 'req/s', ...measured, goal: '-', met: undefined };
  } finally {
    await Promise.all([nest.stop(), bare.stop()]);
  }
}

export default {
  name: 'spine',
  async run({ rounds, quick }) {
    // Many short slices, alternating: this machine's speed drifts over seconds, and only a fine
    // interleaving lets module and baseline see the same drift.
    const seconds = 1;
    const pairs = quick ? 4 : rounds * 6;
    const bare = await startServer(join(here, '../baseline/bare-rpc.mjs'));
    const mod = await startServer(join(here, '../dist/spine.app.js'));
    const results = [];
    try {
      // Let both JITs settle on every body before anything is measured.
      for (const w of WORKLOADS) {
        for (const server of [mod, bare]) await requestRate(`${server.url}/rpc`, w.body, { seconds: 1, connections: w.connections ?? 50 });
      }
      for (const w of WORKLOADS) {
        const servers = { module: mod, baseline: bare };
        const measured = await pairedRounds(
          pairs,
          (side) => requestRate(`${servers[side].url}/rpc`, w.body, { seconds, connections: w.connections ?? 50 }),
          w.workload,
        );
        results.push({ workload: w.workload, unit: 'req/s', ...measured, goal: `>= ${w.goal}`, met: measured.ratio >= w.goal });
      }
    } finally {
      await Promise.all([bare.stop(), mod.stop()]);
    }
    results.push(await nestAdapterFloor(seconds, pairs));
    return results;
  },
};
