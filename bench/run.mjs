#!/usr/bin/env node
/**
 * `npm run bench`: runs every workload in bench/workloads (or those named with --only a,b),
 * prints a table of module vs baseline with ratios and goals, and writes bench/results.json.
 * Each workload starts its own servers in child processes and interleaves rounds of module and
 * baseline so both see the same machine state.
 *
 *   --only a,b          the workloads to run (file names' `name`s)
 *   --rounds n          rounds per comparison (request-rate workloads alternate 6·n slices)
 *   --quick             a smoke run: few, short slices
 *   --processes n       the spine: fresh server processes per workload, its rounds spread over
 *                       them (default 3; one process can keep a slower JIT state all its life)
 *   --platform p        fastify, express or both (default): which platforms the spine measures
 *   --ab <refA> <refB>  the A/B mode: the module built from two commits (`.` for the working
 *                       tree), alternating, reported as B / A; only workloads with an A/B mode
 */
import { readdir, writeFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { checkArguments, cliOption } from './lib/harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);

const option = (name, count) => cliOption(args, name, count);

checkArguments(args, { '--only': 1, '--rounds': 1, '--quick': 0, '--processes': 1, '--platform': 1, '--ab': 2 }, import.meta.url);

const only = option('--only')?.split(',');
const rounds = Number(option('--rounds') ?? 3);
const quick = args.includes('--quick');
const processes = option('--processes') === undefined ? undefined : Number(option('--processes'));
if (processes !== undefined && !(Number.isInteger(processes) && processes > 0)) {
  console.error('--processes is a whole number above 0');
  process.exit(2);
}
const ab = option('--ab', 2);
const platform = option('--platform') ?? 'both';
if (!['fastify', 'express', 'both'].includes(platform)) {
  console.error('--platform is fastify, express or both');
  process.exit(2);
}
const platforms = platform === 'both' ? ['fastify', 'express'] : [platform];

const files = (await readdir(join(here, 'workloads'))).filter((f) => f.endsWith('.mjs')).sort();
// The machine's load beside the figures: on a shared machine they mean little without it.
const load = [loadavg()[0]];
setInterval(() => load.push(loadavg()[0]), 5000).unref();
const rows = [];
let ran = 0;
for (const file of files) {
  const workload = (await import(pathToFileURL(join(here, 'workloads', file)).href)).default;
  if (only && !only.includes(workload.name)) continue;
  if (ab && !workload.runAb) {
    if (only) console.error(`\n== ${workload.name}: no A/B mode, skipped`);
    continue;
  }
  console.error(`\n== ${workload.name}${ab ? ` (A/B: ${ab[0]} vs ${ab[1]})` : ''}`);
  ran++;
  const ctx = { rounds, quick, platforms, ab, processes };
  rows.push(...(await (ab ? workload.runAb(ctx) : workload.run(ctx))));
}
if (!ran) {
  console.error(ab ? 'no selected workload has an A/B mode (the spine has)' : 'no workload matches --only');
  process.exit(2);
}

const fmt = (n) => (n === null || n === undefined ? '-' : Number.isInteger(n) ? String(n) : n >= 100 ? String(Math.round(n)) : n.toFixed(n < 10 ? 3 : 1));
console.log('\n| workload | unit | module | baseline | ratio | goal | met |');
console.log('|---|---|---|---|---|---|---|');
for (const r of rows) {
  console.log(`| ${r.workload} | ${r.unit} | ${fmt(r.module)} | ${fmt(r.baseline)} | ${fmt(r.ratio)} | ${r.goal ?? '-'} | ${r.met === undefined ? '-' : r.met ? 'yes' : 'NO'} |`);
}
load.push(loadavg()[0]);
const loadRange = `${Math.min(...load).toFixed(2)}–${Math.max(...load).toFixed(2)}`;
console.log(`\nload average (1 min) during the run: ${loadRange} on ${cpus().length} cores; Node ${process.version}`);
await writeFile(
  join(here, 'results.json'),
  JSON.stringify({ date: new Date().toISOString(), node: process.version, rounds, quick, processes, platforms, ab, loadavg: loadRange, rows }, null, 2) + '\n',
);
