#!/usr/bin/env node
/**
 * `npm run bench`: runs every workload in bench/workloads (or those named with --only a,b),
 * prints a table of module vs baseline with ratios and goals, and writes bench/results.json.
 * Each workload starts its own servers in child processes and interleaves rounds of module and
 * baseline so both see the same machine state.
 */
import { readdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const only = args.includes('--only') ? args[args.indexOf('--only') + 1].split(',') : null;
const rounds = args.includes('--rounds') ? Number(args[args.indexOf('--rounds') + 1]) : 3;
const quick = args.includes('--quick');

const files = (await readdir(join(here, 'workloads'))).filter((f) => f.endsWith('.mjs')).sort();
const rows = [];
for (const file of files) {
  const workload = (await import(pathToFileURL(join(here, 'workloads', file)).href)).default;
  if (only && !only.includes(workload.name)) continue;
  console.error(`\n== ${workload.name}`);
  rows.push(...(await workload.run({ rounds, quick })));
}

const fmt = (n) => (n === null || n === undefined ? '-' : Number.isInteger(n) ? String(n) : n.toFixed(n < 10 ? 3 : 1));
console.log('\n| workload | unit | module | baseline | ratio | goal | met |');
console.log('|---|---|---|---|---|---|---|');
for (const r of rows) {
  console.log(`| ${r.workload} | ${r.unit} | ${fmt(r.module)} | ${fmt(r.baseline)} | ${fmt(r.ratio)} | ${r.goal ?? '-'} | ${r.met === undefined ? '-' : r.met ? 'yes' : 'NO'} |`);
}
await writeFile(join(here, 'results.json'), JSON.stringify({ date: new Date().toISOString(), node: process.version, rounds, rows }, null, 2) + '\n');
