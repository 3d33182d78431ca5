/**
 * `llm` (bench/README.md):
 * (a) parse throughput — the recorded OpenAI and Anthropic transcripts scaled to 100k tokens
 *     (bench/apps/llm-fake-provider.ts), read from the same local fake provider by
 *     - our adapters (`openAiChat`, `anthropicMessages` of @nest-jsonrpc/llm),
 *     - the Vercel AI SDK (`ai` 6 `streamText` with `@ai-sdk/openai` 3 / `@ai-sdk/anthropic` 3),
 *     - a bare floor: fetch + eventsource-parser + JSON.parse per event, nothing else;
 *     events/s = the transcript's SSE events / the client's CPU time to consume the whole stream
 *     (`process.cpuUsage()` of this process: on a shared machine wall time mostly measures the
 *     neighbours; each run is CPU-bound in the client, so on an idle machine the two agree — the
 *     wall-clock rates are printed too). Goal: adapter >= 0.5 of the floor.
 * (b) relay — tokens from the fake provider through an `@RpcStream` SSE method (`openAiChat` +
 *     `toStreamRows`, bench/apps/llm-relay-app.ts) to a client, against a bare Fastify route piping
 *     the same upstream body (bench/apps/llm-relay-baseline.ts): tokens/s on 100k tokens (goal
 *     >= 0.9; the relay processes' own CPU per token is reported to show what bounds it), and the
 *     latency each token adds: 2,000 tokens paced 1 ms apart are written by the
 *     provider to both paths at the same moment (one request each, concurrently), and the client
 *     takes, token by token, how much later it arrived through the module than through the pipe
 *     (goal: p99 added < 2 ms). Pairing each token with its twin cancels the machine's noise,
 *     which moves both arrivals alike.
 * Servers run as child processes; the clients run in this process, sides interleaved per round.
 */
import { fork } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createParser } from 'eventsource-parser';
import { anthropicMessages, openAiChat } from '@nest-jsonrpc/llm';
import { streamText } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { createAnthropic } from '@ai-sdk/anthropic';
import { median } from '../lib/harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
// The AI SDK warns on stderr about the fake model names; the numbers are what this workload prints.
globalThis.AI_SDK_LOG_WARNINGS = false;
const dist = join(here, '..', 'dist');

function start(script, env) {
  return new Promise((resolve, reject) => {
    const child = fork(join(dist, script), [], { env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const timer = setTimeout(() => reject(new Error(`${script} did not start`)), 20_000);
    child.once('message', (info) => {
      clearTimeout(timer);
      resolve({ child, url: `http://127.0.0.1:${info.port}`, info });
    });
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
}

const stop = (server) => server.child.kill('SIGKILL');
const now = () => performance.now();

// ---- (a) parse throughput -------------------------------------------------------------------

const prompt = [{ role: 'user', content: 'Hi' }];

/** Each parser reads one whole transcript; returns the number of text deltas it produced. */
const parsers = {
  openai: {
    async adapter(url, model) {
      let texts = 0;
      for await (const event of openAiChat({ apiKey: 'bench', baseUrl: `${url}/v1` }).stream({ model, messages: prompt })) if (event.type === 'text') texts++;
      return texts;
    },
    async aiSdk(url, model) {
      const result = streamText({ model: createOpenAI({ apiKey: 'bench', baseURL: `${url}/v1` }).chat(model), prompt: 'Hi', maxRetries: 0 });
      let texts = 0;
      for await (const part of result.fullStream) {
        if (part.type === 'text-delta') texts++;
        else if (part.type === 'error') throw part.error;
      }
      return texts;
    },
    floor: (url, model) => floor(`${url}/v1/chat/completions`, { model, messages: prompt, stream: true }),
  },
  anthropic: {
    async adapter(url, model) {
      let texts = 0;
      for await (const event of anthropicMessages({ apiKey: 'bench', baseUrl: url }).stream({ model, messages: prompt })) if (event.type === 'text') texts++;
      return texts;
    },
    async aiSdk(url, model) {
      const result = streamText({ model: createAnthropic({ apiKey: 'bench', baseURL: `${url}/v1` })(model), prompt: 'Hi', maxRetries: 0, maxOutputTokens: 1 });
      let texts = 0;
      for await (const part of result.fullStream) {
        if (part.type === 'text-delta') texts++;
        else if (part.type === 'error') throw part.error;
      }
      return texts;
    },
    floor: (url, model) => floor(`${url}/v1/messages`, { model, messages: prompt, stream: true, max_tokens: 1 }),
  },
};

/** The floor: fetch, eventsource-parser, JSON.parse of every event; returns the events seen. */
async function floor(url, body) {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  let events = 0;
  const parser = createParser({
    onEvent(event) {
      if (event.data !== '[DONE]') JSON.parse(event.data);
      events++;
    },
  });
  const decoder = new TextDecoder();
  for await (const chunk of res.body) parser.feed(decoder.decode(chunk, { stream: true }));
  return events;
}

async function parseThroughput(provider, kind, ctx, tokens) {
  const url = provider.url;
  const events = kind === 'openai' ? provider.info.openAiEvents : provider.info.anthropicEvents;
  const p = parsers[kind];
  const sides = ['floor', 'adapter', 'aiSdk'];
  for (const side of sides) await p[side](url, 'scaled:2000'); // warm-up (JIT)
  const rates = { floor: [], adapter: [], aiSdk: [] };
  const ratios = { adapter: [], aiSdk: [] };
  for (let round = 0; round < ctx.rounds; round++) {
    const order = round % 2 ? [...sides].reverse() : sides;
    const got = {};
    const wall = {};
    for (const side of order) {
      const started = now();
      const cpu = process.cpuUsage();
      const produced = await p[side](url, 'scaled');
      const used = process.cpuUsage(cpu);
      const cpuSeconds = (used.user + used.system) / 1e6;
      wall[side] = events / ((now() - started) / 1000);
      if (side === 'floor' ? produced !== events : produced !== tokens) throw new Error(`${kind} ${side}: read ${produced}, expected ${side === 'floor' ? events : tokens}`);
      got[side] = events / cpuSeconds;
      rates[side].push(got[side]);
    }
    ratios.adapter.push(got.adapter / got.floor);
    ratios.aiSdk.push(got.aiSdk / got.floor);
    console.error(
      `  ${kind} parse round ${round + 1}: floor ${got.floor.toFixed(0)}, adapter ${got.adapter.toFixed(0)} (${(got.adapter / got.floor).toFixed(3)}), AI SDK ${got.aiSdk.toFixed(0)} (${(got.aiSdk / got.floor).toFixed(3)}) events per CPU-second; ` +
        `wall clock ${wall.floor.toFixed(0)} / ${wall.adapter.toFixed(0)} / ${wall.aiSdk.toFixed(0)} events/s`,
    );
  }
  const label = kind === 'openai' ? 'OpenAI chat' : 'Anthropic messages';
  const ratio = median(ratios.adapter);
  return [
    { workload: `llm parse ${label} ${tokens / 1000}k tokens: adapter vs floor`, unit: 'events/s (client CPU)', module: Math.round(median(rates.adapter)), baseline: Math.round(median(rates.floor)), ratio, goal: '>= 0.5', met: ratio >= 0.5 },
    { workload: `llm parse ${label} ${tokens / 1000}k tokens: AI SDK 6 vs floor (reference)`, unit: 'events/s (client CPU)', module: Math.round(median(rates.aiSdk)), baseline: Math.round(median(rates.floor)), ratio: median(ratios.aiSdk), goal: null, met: undefined },
  ];
}

// ---- (b) relay ------------------------------------------------------------------------------

/** Streams one relay answer; calls onToken(text, receivedAt) per token, returns the token count. */
async function relayOnce(side, server, model, onToken) {
  const isModule = side === 'module';
  const res = await fetch(isModule ? `${server.url}/rpc/stream` : `${server.url}/relay`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(isModule ? { jsonrpc: '2.0', method: 'bench.relay', params: { model }, id: 1 } : { model }),
  });
  if (res.status !== 200) throw new Error(`${side} relay: status ${res.status}`);
  let tokens = 0;
  const parser = createParser({
    onEvent(event) {
      if (event.data === '[DONE]' || event.event === 'end') return;
      const row = JSON.parse(event.data);
      const text = isModule ? row.delta : row.choices?.[0]?.delta?.content;
      if (typeof text === 'string' && text !== '') {
        tokens++;
        onToken?.(text, performance.timeOrigin + performance.now());
      }
    },
  });
  const decoder = new TextDecoder();
  for await (const chunk of res.body) parser.feed(decoder.decode(chunk, { stream: true }));
  return tokens;
}

/** The CPU time (µs) a relay process has used so far, asked over IPC. */
function childCpu(server) {
  return new Promise((resolve) => {
    server.child.once('message', (m) => resolve(m.cpu.user + m.cpu.system));
    server.child.send('cpu');
  });
}

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};

async function relay(servers, ctx, tokens, latencyTokens) {
  // Warm-up (JIT) on the full size, both paths.
  for (const side of ['module', 'baseline']) await relayOnce(side, servers[side], `relay:${tokens}:0`);
  const throughput = { module: [], baseline: [], ratios: [] };
  const cpuPerToken = { module: [], baseline: [] };
  const latency = { module: { p50: [], p99: [] }, baseline: { p50: [], p99: [] }, added50: [], added99: [] };
  for (let round = 0; round < ctx.rounds; round++) {
    const order = round % 2 ? ['baseline', 'module'] : ['module', 'baseline'];
    const rate = {};
    // Two pairs per round, each side's rate the better of its two runs in the round.
    for (const side of [...order, ...order]) {
      const cpuBefore = await childCpu(servers[side]);
      const started = now();
      const got = await relayOnce(side, servers[side], `relay:${tokens}:0`);
      const seconds = (now() - started) / 1000;
      if (got !== tokens) throw new Error(`${side} relayed ${got} of ${tokens} tokens`);
      cpuPerToken[side].push(((await childCpu(servers[side])) - cpuBefore) / tokens);
      rate[side] = Math.max(rate[side] ?? 0, tokens / seconds);
    }
    throughput.module.push(rate.module);
    throughput.baseline.push(rate.baseline);
    throughput.ratios.push(rate.module / rate.baseline);

    const arrivals = { module: [], baseline: [] };
    const delays = { module: [], baseline: [] };
    const model = `relay:${latencyTokens}:1:round${round}`;
    const counts = await Promise.all(
      ['module', 'baseline'].map((side) =>
        relayOnce(side, servers[side], model, (text, at) => {
          arrivals[side].push(at);
          delays[side].push(at - Number(text));
        }),
      ),
    );
    if (counts.some((count) => count !== latencyTokens)) throw new Error(`paced relay: ${counts.join(' / ')} of ${latencyTokens} tokens`);
    const added = arrivals.module.map((at, i) => at - arrivals.baseline[i]);
    const lat = { added50: percentile(added, 50), added99: percentile(added, 99) };
    for (const side of ['module', 'baseline']) {
      latency[side].p50.push(percentile(delays[side], 50));
      latency[side].p99.push(percentile(delays[side], 99));
    }
    latency.added50.push(lat.added50);
    latency.added99.push(lat.added99);
    console.error(
      `  relay round ${round + 1}: module ${rate.module.toFixed(0)}, baseline ${rate.baseline.toFixed(0)} tokens/s (${(rate.module / rate.baseline).toFixed(3)}), ` +
        `relay CPU ${median(cpuPerToken.module).toFixed(2)} vs ${median(cpuPerToken.baseline).toFixed(2)} µs/token; ` +
        `added latency per token p50 ${lat.added50.toFixed(3)} ms, p99 ${lat.added99.toFixed(3)} ms`,
    );
  }
  const ratio = median(throughput.ratios);
  const added99 = median(latency.added99);
  return [
    { workload: `llm relay ${tokens / 1000}k tokens: @RpcStream SSE vs bare Fastify pipe`, unit: 'tokens/s', module: Math.round(median(throughput.module)), baseline: Math.round(median(throughput.baseline)), ratio, goal: '>= 0.9', met: ratio >= 0.9 },
    { workload: 'llm relay: CPU per token in the relay process (module, pipe)', unit: 'µs', module: median(cpuPerToken.module), baseline: median(cpuPerToken.baseline), ratio: null, goal: null, met: undefined },
    { workload: 'llm relay latency per token (provider write to client read), p50', unit: 'ms', module: median(latency.module.p50), baseline: median(latency.baseline.p50), ratio: null, goal: null, met: undefined },
    { workload: 'llm relay latency per token (provider write to client read), p99', unit: 'ms', module: median(latency.module.p99), baseline: median(latency.baseline.p99), ratio: null, goal: null, met: undefined },
    { workload: 'llm relay added latency per token (same token, module minus pipe), p50', unit: 'ms', module: median(latency.added50), baseline: null, ratio: null, goal: null, met: undefined },
    { workload: 'llm relay added latency per token (same token, module minus pipe), p99', unit: 'ms', module: added99, baseline: null, ratio: null, goal: '< 2 ms', met: added99 < 2 },
  ];
}

export default {
  name: 'llm',
  /** @param {{rounds:number, quick:boolean}} ctx */
  async run(ctx) {
    const tokens = ctx.quick ? 20_000 : 100_000;
    const provider = await start('llm-fake-provider.js', { TOKENS: String(tokens) });
    const servers = {};
    try {
      const rows = [...(await parseThroughput(provider, 'openai', ctx, tokens)), ...(await parseThroughput(provider, 'anthropic', ctx, tokens))];
      servers.module = await start('llm-relay-app.js', { UPSTREAM_URL: provider.url });
      servers.baseline = await start('llm-relay-baseline.js', { UPSTREAM_URL: provider.url });
      rows.push(...(await relay(servers, ctx, tokens, ctx.quick ? 500 : 2000)));
      return rows;
    } finally {
      for (const server of [provider, servers.module, servers.baseline]) if (server) stop(server);
    }
  },
};
