/**
 * `guarded`: one call on a method with a roles check, a rate limit high enough not to trip and a
 * cache hit, against a bare Fastify JSON-RPC dispatch of the same method, in the same run.
 * Goal: >= 0.80 of bare Fastify's one-call rate.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { pairedRounds } from '../lib/harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, '..', 'dist');
const BODY = JSON.stringify({ jsonrpc: '2.0', method: 'catalog.quote', params: { sku: 'A-100', qty: 3 }, id: 1 });

async function start(script) {
  const child = spawn(process.execPath, [join(dist, script)], { env: { ...process.env, PORT: '0' }, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.setEncoding('utf8');
  while (!/listening (\d+)/.test(out)) {
    const [chunk] = await Promise.race([once(child.stdout, 'data'), once(child, 'exit').then(() => { throw new Error(`${script} exited`); })]);
    out += chunk;
  }
  return { child, url: `http://127.0.0.1:${/listening (\d+)/.exec(out)[1]}/rpc` };
}

async function check(url) {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-roles': 'reader' }, body: BODY });
  const body = await res.json();
  if (!body.result || body.result.total !== 18.75) throw new Error(`unexpected answer from ${url}: ${JSON.stringify(body)}`);
}

function measure(url, duration) {
  return new Promise((resolve, reject) => {
    autocannon(
      { url, method: 'POST', duration, connections: 16, pipelining: 1, body: BODY, headers: { 'content-type': 'application/json', 'x-roles': 'reader' } },
      (error, result) => {
        if (error) return reject(error);
        if (result.non2xx || result.errors) return reject(new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`));
        resolve(result.requests.average);
      },
    );
  });
}


export default {
  name: 'guarded',
  /** @param {{rounds:number, quick:boolean}} ctx */
  async run(ctx) {
    // Short alternating slices (see spine.mjs): the machine's speed drifts over seconds.
    const duration = 1;
    const pairs = ctx.quick ? 4 : ctx.rounds * 6;
    const moduleApp = await start('guarded.js');
    const baseline = await start('guarded-baseline.js');
    try {
      await check(moduleApp.url);
      await check(baseline.url);
      await measure(moduleApp.url, 2); // warm-up (JIT, first cache fill)
      await measure(baseline.url, 2);
      const urls = { module: moduleApp.url, baseline: baseline.url };
      const { module: m, baseline: b, ratio } = await pairedRounds(pairs, (side) => measure(urls[side], duration), 'guarded');
      return [{ workload: 'roles + rate limit + cache hit, one call', unit: 'req/s', module: Math.round(m), baseline: Math.round(b), ratio, goal: '>= 0.80', met: ratio >= 0.8 }];
    } finally {
      moduleApp.child.kill();
      baseline.child.kill();
    }
  },
};
