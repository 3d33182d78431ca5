/**
 * `schema`: one call whose params are a 10-field object validated by a zod schema, against the
 * same call validated by a class-validator DTO and against no validation, all three methods of one
 * app (bench/apps/schema.app.ts), in paired rounds. Goal: the zod-validated call within 5 % of the
 * unvalidated call's rate (zod parses such an object in about a microsecond, and the module adds
 * nothing per call beyond it). The DTO row has no goal: it shows what the other style costs.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pairedRounds, requestRate, startServer } from '../lib/harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));

const PARAMS = { id: 42, sku: 'BOK-001', qty: 3, price: 12.5, currency: 'EUR', customer: 'Ada Lovelace', express: false, tags: ['gift', 'fragile'], note: 'ring twice', priority: 2 };
const body = (method) => JSON.stringify({ jsonrpc: '2.0', method, params: PARAMS, id: 1 });

async function check(url, method) {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body(method) });
  const answer = await res.json();
  if (answer.result?.total !== 37.5) throw new Error(`unexpected answer from ${method}: ${JSON.stringify(answer)}`);
  const bad = await (await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', method, params: { ...PARAMS, qty: 0 }, id: 1 }) })).json();
  if (method !== 'order.none' && bad.error?.code !== -32602) throw new Error(`${method} did not validate: ${JSON.stringify(bad)}`);
}

export default {
  name: 'schema',
  /** @param {{rounds:number, quick:boolean}} ctx */
  async run(ctx) {
    const seconds = 1;
    const pairs = ctx.quick ? 4 : ctx.rounds * 6;
    const server = await startServer(join(here, '../dist/schema.app.js'));
    const url = `${server.url}/rpc`;
    try {
      for (const method of ['order.zod', 'order.dto', 'order.none']) {
        await check(url, method);
        await requestRate(url, body(method), { seconds: 2 }); // warm-up (JIT)
      }
      const rate = (method) => requestRate(url, body(method), { seconds, connections: 16 });
      const zod = await pairedRounds(pairs, (side) => rate(side === 'module' ? 'order.zod' : 'order.none'), 'zod vs none');
      const dto = await pairedRounds(pairs, (side) => rate(side === 'module' ? 'order.dto' : 'order.none'), 'DTO vs none');
      return [
        { workload: '10-field params validated by zod vs not validated, one call', unit: 'req/s', module: Math.round(zod.module), baseline: Math.round(zod.baseline), ratio: zod.ratio, goal: '>= 0.95', met: zod.ratio >= 0.95 },
        { workload: 'the same params as a class-validator DTO vs not validated', unit: 'req/s', module: Math.round(dto.module), baseline: Math.round(dto.baseline), ratio: dto.ratio, goal: '-', met: undefined },
      ];
    } finally {
      await server.stop();
    }
  },
};
