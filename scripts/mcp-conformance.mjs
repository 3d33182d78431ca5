#!/usr/bin/env node
// `npm run conformance:mcp`: MCP's official conformance runner (@modelcontextprotocol/conformance,
// a devDependency) against the fixture app of test/mcp/conformance — an app built with this module
// whose tools are the runner's test tools written as RPC methods. It runs the frozen requirement
// sets of both wire versions (2025-11-25: the initialize handshake; 2026-07-28: stateless with
// per-request _meta) and every scenario of the Tasks extension, prints the runner's summaries, and
// exits non-zero when a scored scenario fails: a failure is allowed only when
// test/mcp/conformance/expected-failures-*.yaml lists it (features the module does not offer, each
// with its reason), and a listed entry that starts passing fails the run too (the runner's rule).
//
// The runner needs Node >= 22 (`fs.globSync`): it runs on the cached Node 24 of
// .ci/node-release.mjs, whatever Node serves the fixture. Needs `npm run build` first (the fixture
// imports the built packages); `npm run conformance:mcp` does it.
//
//   MCP_CONFORMANCE_VERBOSE=1   print the runner's whole output, not only its summaries
//   RPC_TEST_PLATFORM=express   serve the fixture on ExpressAdapter (default: fastify), as the
//                               e2e suites' Express project does
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stripVTControlCharacters } from 'node:util';
import { nodeReleaseHome } from '../.ci/node-release.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const fixtureDir = join(root, 'test/mcp/conformance');
const platform = process.env.RPC_TEST_PLATFORM ?? 'fastify';
// One output folder per platform: the two jest projects may compile the fixture at the same time.
const fixtureOut = join(root, `node_modules/.cache/nest-jsonrpc-mcp-conformance-${platform}`);
const require = createRequire(import.meta.url);
const runner = join(dirname(require.resolve('@modelcontextprotocol/conformance/package.json')), 'dist/index.js');
const tsc = require.resolve('typescript/bin/tsc');
const verbose = process.env.MCP_CONFORMANCE_VERBOSE === '1';

/** The Tasks extension's scenarios (an extension is not part of a requirement set's score). */
const TASKS_SCENARIOS = [
  'tasks-lifecycle',
  'tasks-capability-negotiation',
  'tasks-wire-fields',
  'tasks-request-state-removal',
  'tasks-mrtr-input',
  'tasks-request-headers',
  'tasks-dispatch-and-envelope',
  'tasks-status-notifications',
  'tasks-required-task-error',
  'tasks-mrtr-composition',
];

function run(command, args, { capture = true, env = process.env, timeoutMs = 600_000 } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: root, env, stdio: ['ignore', capture ? 'pipe' : 'inherit', capture ? 'pipe' : 'inherit'] });
    let output = '';
    child.stdout?.on('data', (chunk) => (output += chunk));
    child.stderr?.on('data', (chunk) => (output += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? 1 : 0), output });
    });
  });
}

/** Starts the fixture and resolves with its MCP URL (the line it prints once listening). */
function startFixture() {
  const child = spawn(process.execPath, [join(fixtureOut, 'main.js')], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  const url = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the conformance fixture did not start within 60 s:\n${log}`)), 60_000);
    const onData = (chunk) => {
      log += chunk;
      const match = /on (http:\/\/\S+) \((\w+)\)/.exec(log);
      if (match) {
        clearTimeout(timer);
        resolve({ url: match[1], platform: match[2] });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`the conformance fixture exited (${code}) before listening:\n${log}`)));
  });
  const stop = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  return { url, stop, log: () => log };
}

/** What of the runner's output to show: from its summary on, or its verdict lines for one scenario. */
function report(raw) {
  const output = stripVTControlCharacters(raw);
  if (verbose) return output;
  const summary = output.indexOf('=== SUMMARY ===');
  if (summary !== -1) return output.slice(summary);
  return output
    .split('\n')
    .filter((line) => /FAILURE|Error:|Passed:|SKIPPED|Expected failures|Stale|Unexpected|Baseline|^\s+[~✓✗] /.test(line))
    .join('\n');
}

async function main() {
  console.log('Compiling the conformance fixture (test/mcp/conformance)...');
  const compiled = await run(process.execPath, [tsc, '-p', fixtureDir, '--noCheck', '--outDir', fixtureOut]);
  if (compiled.code !== 0) throw new Error(`compiling the fixture failed:\n${compiled.output}`);
  const node24 = join(nodeReleaseHome(root, 24), 'bin/node');
  const fixture = startFixture();
  const { url, platform: served } = await fixture.url;
  console.log(`Fixture on ${url} (${served}); runner ${require('@modelcontextprotocol/conformance/package.json').version} on ${node24}\n`);
  const env = { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' };
  const runs = [
    { name: 'requirements 2025-11-25', args: ['--requirements', '2025-11-25', '--expected-failures', join(fixtureDir, 'expected-failures-2025-11-25.yaml')] },
    { name: 'requirements 2026-07-28', args: ['--requirements', '2026-07-28', '--expected-failures', join(fixtureDir, 'expected-failures-2026-07-28.yaml')] },
    ...TASKS_SCENARIOS.map((scenario) => ({
      name: `tasks: ${scenario}`,
      args: ['--scenario', scenario, '--spec-version', '2026-07-28', '--force', '--expected-failures', join(fixtureDir, 'expected-failures-tasks.yaml')],
    })),
  ];
  const results = [];
  try {
    for (const { name, args } of runs) {
      console.log(`=== ${name} ===`);
      const { code, output } = await run(node24, [runner, 'server', '--url', url, ...args], { env });
      console.log(`${report(output).trim()}\n`);
      results.push({ name, code });
    }
  } finally {
    await fixture.stop();
  }
  console.log('=== MCP conformance ===');
  for (const { name, code } of results) console.log(`${code === 0 ? 'PASS' : 'FAIL'}  ${name}`);
  const failed = results.filter((r) => r.code !== 0).length;
  console.log(failed ? `\n${failed} of ${results.length} runs failed` : `\nall ${results.length} runs passed`);
  return failed ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
