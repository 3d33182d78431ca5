/** Shared pieces of the workloads: child-process servers, autocannon runs, medians. */
import { fork } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

/**
 * Starts a server script in a child process; resolves once it reports its port. The child's
 * stderr is passed through and its tail kept, so a server that fails to start rejects with what
 * it printed (a workload can then tell "this build does not support that" from a real failure).
 * `quiet`: the stderr is only kept, not passed through, for a start that is allowed to fail.
 */
export function startServer(script, env = {}, { quiet = false } = {}) {
  return new Promise((resolve, reject) => {
    const child = fork(script, [], { env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'pipe', 'ipc'] });
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk) => {
      if (!quiet) process.stderr.write(chunk);
      stderr = (stderr + chunk).slice(-8192);
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${script} did not start`));
    }, 20000);
    child.once('message', (m) => {
      clearTimeout(timer);
      resolve({ child, port: m.port, url: `http://127.0.0.1:${m.port}`, stop: () => stopChild(child) });
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(Object.assign(new Error(`${script} exited with ${code}${stderr ? `:\n${stderr}` : ''}`), { stderr }));
    });
  });
}

function stopChild(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
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

/** utime + stime of a process (all its threads), in clock ticks (10 ms on Linux). */
export function cpuTicks(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

const hasProc = existsSync('/proc/self/stat');

/**
 * One slice of load on `server` (from startServer): `{ rate }` in requests per second and, where
 * Linux's /proc is there, `perCpu`: the requests answered per second of the server process's own
 * CPU time. The rate says how much CPU the neighbours left; CPU per request barely depends on it,
 * so on a shared machine it is the steadier measure of what a request costs.
 */
export async function loadSlice(server, body, { seconds = 1, connections = 50 } = {}) {
  const before = hasProc ? cpuTicks(server.child.pid) : 0;
  const result = await autocannon({ url: `${server.url}/rpc`, method: 'POST', headers: { 'content-type': 'application/json' }, body, duration: seconds, connections });
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${server.url}/rpc: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  }
  const slice = { rate: result.requests.average };
  if (hasProc) slice.perCpu = result.requests.total / (Math.max(1, cpuTicks(server.child.pid) - before) / 100);
  return slice;
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/**
 * Measures every side once per round, walking `order` forwards in even rounds and backwards in
 * odd ones, and reports each comparison `[numerator, denominator]` as the median of its per-round
 * ratios. Put the two sides of each comparison that matters next to each other in `order`: their
 * slices then always ran back to back, so drifts of a shared or virtualised machine cancel out
 * (sides further apart in `order` are compared too, with more drift between their slices).
 *
 * `measure(side)` returns a number, or several named figures of one slice (`{ rate, perCpu }`
 * from loadSlice); each comparison then holds `{ num, den, [figure]: { module, baseline, ratio } }`
 * (for a plain number the figure is `value`). `beforeRound(round)`, when given, runs before each
 * round (the spine restarts its servers there, see `processes` in workloads/spine.mjs).
 */
export async function alternatingRounds(rounds, order, measure, comparisons, label = '', { beforeRound } = {}) {
  const figures = Object.fromEntries(order.map((side) => [side, []]));
  for (let round = 0; round < rounds; round++) {
    if (beforeRound) await beforeRound(round);
    const walk = round % 2 ? [...order].reverse() : order;
    const got = {};
    for (const side of walk) {
      const slice = await measure(side);
      got[side] = typeof slice === 'number' ? { value: slice } : slice;
    }
    for (const side of order) figures[side].push(got[side]);
    const [first] = Object.keys(got[order[0]]);
    const shown = comparisons.map(([num, den]) => `${num}/${den} ${(got[num][first] / got[den][first]).toFixed(3)}`).join(', ');
    console.error(`  ${label} round ${round + 1}: ${order.map((side) => `${side} ${got[side][first].toFixed(0)}`).join(', ')}; ${shown}`);
  }
  const names = Object.keys(figures[order[0]][0]);
  return {
    ratios: comparisons.map(([num, den]) => {
      const compared = { num, den };
      for (const name of names) {
        compared[name] = {
          module: median(figures[num].map((f) => f[name])),
          baseline: median(figures[den].map((f) => f[name])),
          ratio: median(figures[num].map((f, round) => f[name] / figures[den][round][name])),
        };
      }
      return compared;
    }),
  };
}

/**
 * Runs `measure(side)` for module and baseline back to back, `rounds` times, flipping which goes
 * first each round. The ratio reported is the median of the per-round ratios: each pair ran within
 * seconds of each other, so drifts of a shared or virtualised machine cancel out.
 */
export async function pairedRounds(rounds, measure, label = '') {
  const { ratios } = await alternatingRounds(rounds, ['module', 'baseline'], measure, [['module', 'baseline']], label);
  return ratios[0].value;
}

/**
 * The value of the command-line option `name` in `args` (an array of `count` values when
 * `count` > 1), undefined when absent; a missing value is a usage error (exit code 2).
 */
/**
 * Refuses anything on the command line that is not one of `options` (each with how many values it
 * takes), printing the usage from the head comment of the script at `scriptUrl`; `--help` prints it
 * and exits 0. Without it a typo or `--help` would start a run of every workload (tens of minutes).
 */
export function checkArguments(args, options, scriptUrl) {
  for (let at = 0; at < args.length; at += 1 + (options[args[at]] ?? 0)) {
    if (options[args[at]] !== undefined) continue;
    const lines = readFileSync(fileURLToPath(scriptUrl), 'utf8').split('\n');
    const usage = lines.slice(2, lines.indexOf(' */')).map((line) => line.replace(/^ \* ?/, ''));
    const help = args[at] === '--help' || args[at] === '-h';
    (help ? console.log : console.error)([...(help ? [] : [`unknown argument ${args[at]}`, '']), ...usage].join('\n'));
    process.exit(help ? 0 : 2);
  }
}

export function cliOption(args, name, count = 1) {
  const at = args.indexOf(name);
  if (at < 0) return undefined;
  const values = args.slice(at + 1, at + 1 + count);
  if (values.length < count || values.some((v) => v.startsWith('--'))) {
    console.error(`${name} needs ${count} value${count > 1 ? 's' : ''}`);
    process.exit(2);
  }
  return count === 1 ? values[0] : values;
}
