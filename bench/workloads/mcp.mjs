/**
 * `mcp`: a stateless MCP `tools/call` of an `echo` tool through our `POST /mcp`
 * (bench/apps/mcp-app.ts) against the same tool in `@rekog/mcp-nest` 2 (bench/apps/mcp-nest-app.ts),
 * both on Nest 12 + FastifyAdapter, for both protocol eras:
 * - 2025 era: the request the official SDK 1.x client (`@modelcontextprotocol/sdk`) sends for a
 *   `tools/call` after its `initialize` (`MCP-Protocol-Version: 2025-11-25`, no session id);
 * - 2026 era: the request the SDK 2 client (`@modelcontextprotocol/client`, version negotiation
 *   `auto`) sends once it negotiated `2026-07-28` (`Mcp-Method` / `Mcp-Name` headers, `_meta`
 *   envelope in the body).
 * Each request is recorded from the real client's fetch (the client connects and calls `echo`
 * once against each server; its result is checked), then replayed with autocannon, every answer
 * checked to carry the echoed `structuredContent`. A 2025-06-18 request is checked, not measured.
 * Calls/s: 1 s slices alternating ours and mcp-nest (order flipped each pair), the median of the
 * per-pair ratios (see pairedRounds). Server CPU per call: the server process's `cpuUsage()`
 * (asked over IPC) across each slice / the calls answered in it. Goals: ours >= 5x
 * mcp-nest's calls/s on both eras, and ours <= 2x the server CPU per call of the same tool over the
 * REST surface `POST /mcp/call` (our catalog, runner and pipeline without any MCP protocol work),
 * measured in the same run. Reference: the same `echo` over `POST /rpc` (one call without MCP).
 * Without our endpoint, our side is skipped LOUDLY and mcp-nest is measured alone.
 */
import { fork } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { Client as SdkV2Client, StreamableHTTPClientTransport as SdkV2Transport } from '@modelcontextprotocol/client';
import { Client as SdkV1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as SdkV1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { median } from '../lib/harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, '..', 'dist');
const CONNECTIONS = 16;
const TEXT = 'hello from the bench';
const ECHOED = `"structuredContent":{"text":${JSON.stringify(TEXT)}}`;

function start(script) {
  return new Promise((resolve, reject) => {
    const child = fork(join(dist, script), [], { env: { ...process.env, PORT: '0' }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const timer = setTimeout(() => reject(new Error(`${script} did not start`)), 30_000);
    child.once('message', (info) => {
      clearTimeout(timer);
      resolve({ child, url: `http://127.0.0.1:${info.port}` });
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited with ${code}`));
    });
  });
}

const stop = (server) => server && server.child.exitCode === null && server.child.kill('SIGKILL');

/** The CPU time (µs) a server process has used so far, asked over IPC. */
function serverCpu(server) {
  return new Promise((resolve) => {
    server.child.once('message', (m) => resolve(m.cpu.user + m.cpu.system));
    server.child.send('cpu');
  });
}

/** The protocol eras measured: how a real client of that era is made. */
const ERAS = [
  {
    era: '2025-11-25',
    label: '2025 era (SDK 1.x client, MCP-Protocol-Version 2025-11-25)',
    connect: (url, fetch) => [new SdkV1Client({ name: 'bench', version: '1.0.0' }), new SdkV1Transport(new URL(url), { fetch })],
  },
  {
    era: '2026-07-28',
    label: '2026 era (SDK 2 client, negotiated 2026-07-28)',
    connect: (url, fetch) => [
      new SdkV2Client({ name: 'bench', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } }),
      new SdkV2Transport(new URL(url), { fetch }),
    ],
  },
];

/**
 * Connects a real client of `era` to `url`, calls `echo` once, checks the result, and returns the
 * `tools/call` request it sent (headers and body), ready for replay.
 */
async function recordToolsCall(era, url) {
  let recorded;
  const recordingFetch = (input, init = {}) => {
    const body = typeof init.body === 'string' ? init.body : undefined;
    if (body?.includes('"tools/call"')) {
      const headers = Object.fromEntries(new globalThis.Headers(init.headers));
      recorded = { headers, body };
    }
    return fetch(input, init);
  };
  const [client, transport] = era.connect(url, recordingFetch);
  await client.connect(transport);
  try {
    const result = await client.callTool({ name: 'echo', arguments: { text: TEXT } });
    if (result.isError || result.structuredContent?.text !== TEXT || JSON.parse(result.content[0].text).text !== TEXT) {
      throw new Error(`${url} (${era.era}): unexpected tools/call result ${JSON.stringify(result)}`);
    }
  } finally {
    await client.close();
  }
  if (!recorded) throw new Error(`${url} (${era.era}): the client sent no tools/call request`);
  if (recorded.headers['mcp-protocol-version'] !== era.era) {
    throw new Error(`${url}: the ${era.era} client sent MCP-Protocol-Version ${recorded.headers['mcp-protocol-version']}`);
  }
  return recorded;
}

/** Replays `request` once with fetch and checks the answer; returns it. */
async function replayOnce(url, request) {
  const res = await fetch(url, { method: 'POST', headers: request.headers, body: request.body });
  const text = await res.text();
  if (res.status !== 200 || !text.includes(ECHOED) || text.includes('"isError":true')) {
    throw new Error(`${url}: replayed tools/call answered ${res.status} ${text.slice(0, 300)}`);
  }
  return text;
}

/** Calls/s of `request` replayed for `seconds`, and the server's CPU µs per answered call. */
async function measure(server, path, request, seconds, verify = (body) => body.includes(ECHOED)) {
  const cpuBefore = await serverCpu(server);
  const result = await autocannon({
    url: `${server.url}${path}`,
    method: 'POST',
    headers: request.headers,
    body: request.body,
    duration: seconds,
    connections: CONNECTIONS,
    pipelining: 1,
    verifyBody: verify,
  });
  const cpu = (await serverCpu(server)) - cpuBefore;
  if (result.non2xx || result.errors || result.mismatches) {
    throw new Error(`${server.url}${path}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.mismatches} unexpected bodies`);
  }
  const calls = result['2xx'];
  return { rate: result.requests.average, cpuPerCall: calls ? cpu / calls : NaN };
}

async function startOurs() {
  try {
    const ours = await start('mcp-app.js');
    await recordToolsCall(ERAS[0], `${ours.url}/mcp`);
    return ours;
  } catch (error) {
    console.error(
      '\n  !!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n' +
        `  !! mcp: OUR POST /mcp IS NOT AVAILABLE (${error.message.split('\n')[0]}).\n` +
        '  !! Our side is SKIPPED: only @rekog/mcp-nest is measured, no ratio, the goal is not judged.\n' +
        '  !!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n',
    );
    return null;
  }
}

/**
 * `pairs` rounds of 1 s slices, one per side, the order rotated each round (the sides' positions
 * cycle), so neighbours' load hits every side alike. Per round: each side's calls/s and server CPU
 * per call. Returns per side the medians, and per round the rate ratios against mcp-nest.
 */
async function rotatedRounds(pairs, servers, sides, request, label) {
  const got = Object.fromEntries(sides.map((side) => [side, { rates: [], cpu: [], ratios: [] }]));
  for (let round = 0; round < pairs; round++) {
    const order = sides.map((_, i) => sides[(i + round) % sides.length]);
    if (round % 2) order.reverse();
    const rate = {};
    for (const side of order) {
      const m = await measure(servers[side], '/mcp', request, 1);
      rate[side] = m.rate;
      got[side].rates.push(m.rate);
      got[side].cpu.push(m.cpuPerCall);
    }
    for (const side of sides) got[side].ratios.push(rate[side] / rate.mcpNest);
    console.error(`  ${label} round ${round + 1}: ${sides.map((side) => `${side} ${rate[side].toFixed(0)}/s ${got[side].cpu.at(-1).toFixed(0)} µs`).join(', ')}`);
  }
  return Object.fromEntries(
    sides.map((side) => [side, { rate: median(got[side].rates), cpu: median(got[side].cpu), ratio: median(got[side].ratios) }]),
  );
}

export default {
  name: 'mcp',
  /** @param {{rounds:number, quick:boolean}} ctx */
  async run(ctx) {
    const pairs = ctx.quick ? 4 : ctx.rounds * 6;
    const rows = [];
    const servers = {};
    try {
      servers.mcpNest = await start('mcp-nest-app.js');
      servers.floor = await start('mcp-sdk-floor.js');
      servers.once = await start('mcp-sdk-once.js');
      servers.ours = await startOurs();
      const sides = servers.ours ? ['ours', 'mcpNest', 'floor'] : ['mcpNest', 'floor'];
      // The once-built SDK server is a 2025-era reference only (see bench/apps/mcp-sdk-once.ts).
      const sidesOf = (era) => (era.era === '2025-11-25' ? [...sides, 'once'] : sides);

      // Record each era's request from the real clients against every server; replay-check every
      // recorded request on all of them, and a 2025-06-18 variant of the 2025 one.
      const requests = {};
      for (const era of ERAS) {
        for (const side of sidesOf(era)) {
          const recorded = await recordToolsCall(era, `${servers[side].url}/mcp`);
          requests[era.era] ??= recorded;
        }
        for (const side of sidesOf(era)) await replayOnce(`${servers[side].url}/mcp`, requests[era.era]);
      }
      const older = { ...requests['2025-11-25'], headers: { ...requests['2025-11-25'].headers, 'mcp-protocol-version': '2025-06-18' } };
      for (const side of sidesOf(ERAS[0])) await replayOnce(`${servers[side].url}/mcp`, older);
      console.error(`  recorded requests:\n${ERAS.map((e) => `    ${e.era}: ${JSON.stringify(requests[e.era])}`).join('\n')}`);

      // Warm-up (JIT, lazily built SDK pieces), every era on every side.
      for (const era of ERAS) for (const side of sidesOf(era)) await measure(servers[side], '/mcp', requests[era.era], 2);

      const oursCpu = {};
      for (const era of ERAS) {
        const r = await rotatedRounds(pairs, servers, sidesOf(era), requests[era.era], `mcp ${era.era}`);
        const nest = r.mcpNest;
        if (r.ours) {
          oursCpu[era.era] = r.ours.cpu;
          rows.push(
            { workload: `MCP tools/call echo, ${era.label}: ours vs @rekog/mcp-nest`, unit: 'calls/s', module: Math.round(r.ours.rate), baseline: Math.round(nest.rate), ratio: r.ours.ratio, goal: '>= 5', met: r.ours.ratio >= 5 },
            { workload: `MCP ${era.era}: server CPU per call, ours vs mcp-nest (ratio = mcp-nest / ours: calls per CPU-second)`, unit: 'µs', module: r.ours.cpu, baseline: nest.cpu, ratio: nest.cpu / r.ours.cpu, goal: null, met: undefined },
          );
        } else {
          rows.push({ workload: `MCP tools/call echo, ${era.label}: OURS SKIPPED (no /mcp) vs @rekog/mcp-nest`, unit: 'calls/s', module: null, baseline: Math.round(nest.rate), ratio: null, goal: '>= 5', met: false });
          rows.push({ workload: `MCP ${era.era}: server CPU per call, mcp-nest only`, unit: 'µs', module: null, baseline: nest.cpu, ratio: null, goal: null, met: undefined });
        }
        rows.push(
          { workload: `reference: bare SDK createMcpHandler on node:http (no Nest/Fastify), ${era.era}, vs mcp-nest`, unit: 'calls/s', module: Math.round(r.floor.rate), baseline: Math.round(nest.rate), ratio: r.floor.ratio, goal: null, met: undefined },
          { workload: `reference: bare SDK createMcpHandler, ${era.era}: server CPU per call (ratio = mcp-nest / SDK)`, unit: 'µs', module: r.floor.cpu, baseline: nest.cpu, ratio: nest.cpu / r.floor.cpu, goal: null, met: undefined },
        );
        if (r.once) {
          rows.push(
            { workload: `reference: SDK Server built once + in-process transport on node:http, ${era.era}, vs mcp-nest`, unit: 'calls/s', module: Math.round(r.once.rate), baseline: Math.round(nest.rate), ratio: r.once.ratio, goal: null, met: undefined },
            { workload: `reference: SDK Server built once, ${era.era}: server CPU per call (ratio = mcp-nest / it)`, unit: 'µs', module: r.once.cpu, baseline: nest.cpu, ratio: nest.cpu / r.once.cpu, goal: null, met: undefined },
          );
        }
      }

      if (servers.ours) {
        // References, not goals, on our app: the same echo as a plain JSON-RPC call, and as a tool
        // call through the REST surface (same catalog, runner and pipeline as /mcp, no SDK).
        const references = [
          {
            label: 'the same echo over POST /rpc on our app',
            path: '/rpc',
            request: { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', method: 'echo', params: { text: TEXT }, id: 1 }) },
            expected: `"result":{"text":${JSON.stringify(TEXT)}}`,
          },
          {
            label: 'the same tool call over our REST POST /mcp/call (same runner and pipeline, no SDK)',
            path: '/mcp/call',
            request: { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'echo', arguments: { text: TEXT } }) },
            expected: ECHOED,
          },
        ];
        for (const { label, path, request, expected } of references) {
          const verify = (body) => body.includes(expected);
          await measure(servers.ours, path, request, 1, verify);
          const got = [];
          for (let i = 0; i < Math.max(3, pairs >> 1); i++) got.push(await measure(servers.ours, path, request, 1, verify));
          const cpu = median(got.map((g) => g.cpuPerCall));
          rows.push(
            { workload: `reference: ${label}`, unit: 'calls/s', module: Math.round(median(got.map((g) => g.rate))), baseline: null, ratio: null, goal: null, met: undefined },
            { workload: `reference: ${label}, server CPU per call`, unit: 'µs', module: cpu, baseline: null, ratio: null, goal: null, met: undefined },
          );
          if (path === '/mcp/call') {
            // The MCP protocol's own cost on top of the tool call: ours over MCP / the same call over REST.
            for (const era of ERAS) {
              const ratio = oursCpu[era.era] / cpu;
              rows.push({ workload: `MCP ${era.era}: server CPU per call, ours over POST /mcp vs the same tool over REST POST /mcp/call`, unit: 'µs', module: oursCpu[era.era], baseline: cpu, ratio, goal: '<= 2', met: ratio <= 2 });
            }
          }
        }
      }
    } finally {
      for (const server of Object.values(servers)) stop(server);
    }
    return rows;
  },
};
