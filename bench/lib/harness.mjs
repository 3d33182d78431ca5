/** Shared pieces of the workloads: child-process servers, autocannon runs, medians. */
import { fork } from 'node:child_process';
import autocannon from 'autocannon';

/** Starts a server script in a child process; resolves once it reports its port. */
export function startServer(script, env = {}) {
  return new Promise((resolve, reject) => {
    const child = fork(script, [], { env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const timer = setTimeout(() => reject(new Error(`${script} did not start`)), 20000);
    child.once('message', (m) => {
      clearTimeout(timer);
      resolve({ child, port: m.port, url: `http://127.0.0.1:${m.port}`, stop: () => stopChild(child) });
    });
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
}

function stopChild(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

/** Requests per second for one POST body, averaged over `seconds`. */
export async function requestRate(url, body, { seconds = 5, connections = 50, pipelining = 1 } = {}) {
  const result = await autocannon({
    url,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    duration: seconds,
    connections,
    pipelining,
  });
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  }
  return result.requests.average;
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/**
 * Runs `measure(side)` for module and baseline back to back, `rounds` times, flipping which goes
 * first each round. The ratio reported is the median of the per-round ratios: each pair ran within
 * seconds of each other, so drifts of a shared or virtualised machine cancel out.
 */
export async function pairedRounds(rounds, measure, label = '') {
  const module = [];
  const baseline = [];
  const ratios = [];
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 ? ['baseline', 'module'] : ['module', 'baseline'];
    const got = {};
    for (const side of order) got[side] = await measure(side);
    module.push(got.module);
    baseline.push(got.baseline);
    ratios.push(got.module / got.baseline);
    console.error(`  ${label} round ${round + 1}: module ${got.module.toFixed(0)}, baseline ${got.baseline.toFixed(0)}, ratio ${(got.module / got.baseline).toFixed(3)}`);
  }
  return { module: median(module), baseline: median(baseline), ratio: median(ratios) };
}
