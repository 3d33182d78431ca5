/**
 * Bench: a fake LLM provider (node:http), started by bench/workloads/llm.mjs as a child process;
 * reports its port over IPC.
 * - `POST /v1/chat/completions` with model `scaled` and `POST /v1/messages`: the recorded OpenAI and
 *   Anthropic transcripts of test/llm/fixtures (`openai-chat/text.sse`, `anthropic-messages/text.sse`)
 *   scaled to TOKENS text chunks by repeating their recorded content chunks, built once and written
 *   in 16 KiB slices as fast as the client reads (honouring `drain`); model `scaled:<n>` gives n
 *   chunks instead (warm-up runs).
 * - `POST /v1/chat/completions` with model `relay:<tokens>:0`: an OpenAI stream of `<tokens>` chunks,
 *   prebuilt and written as fast as the client reads (throughput).
 * - model `relay:<tokens>:<paceMs>:<group>`: the requests of one group (two: the module's relay and
 *   the baseline's) are answered together, one chunk every `paceMs` ms written to all of them at the
 *   same moment, its text the send time (`performance.timeOrigin + performance.now()`, ms): the
 *   client compares when the same token arrives through each path.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

const fixtures = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'test', 'llm', 'fixtures');
const TOKENS = Number(process.env.TOKENS ?? 100_000);

const sseEvents = (file: string) => readFileSync(join(fixtures, file), 'utf8').split('\n\n').filter((e) => e.trim() !== '');

/** openai-chat/text.sse: role chunk, 47 content chunks, finish chunk, usage chunk, [DONE]. */
function scaledOpenAi(tokens: number): { body: Buffer; events: number } {
  const events = sseEvents('openai-chat/text.sse');
  const content = events.filter((e) => e.includes('"delta":{"content"'));
  const out = [events[0]];
  for (let i = 0; i < tokens; i++) out.push(content[i % content.length]);
  out.push(...events.slice(-3));
  return { body: Buffer.from(out.join('\n\n') + '\n\n'), events: out.length };
}

/** anthropic-messages/text.sse: message_start, content_block_start, ping, 3 text deltas, stop, message_delta, message_stop. */
function scaledAnthropic(tokens: number): { body: Buffer; events: number } {
  const events = sseEvents('anthropic-messages/text.sse');
  const deltas = events.filter((e) => e.includes('"text_delta"'));
  const head = events.slice(0, events.indexOf(deltas[0]));
  const tail = events.slice(events.indexOf(deltas.at(-1)!) + 1);
  const out = [...head];
  for (let i = 0; i < tokens; i++) out.push(deltas[i % deltas.length]);
  out.push(...tail);
  return { body: Buffer.from(out.join('\n\n') + '\n\n'), events: out.length };
}

const openAiScaled = scaledOpenAi(TOKENS);
const anthropicScaled = scaledAnthropic(TOKENS);
/** `scaled:<tokens>` bodies (warm-up runs), built on first use. */
const smallBodies = new Map<string, Buffer>();
const scaledBody = (kind: 'openai' | 'anthropic', model: string): Buffer => {
  const tokens = model.startsWith('scaled:') ? Number(model.slice(7)) : undefined;
  if (tokens === undefined) return kind === 'openai' ? openAiScaled.body : anthropicScaled.body;
  const key = `${kind}:${tokens}`;
  if (!smallBodies.has(key)) smallBodies.set(key, (kind === 'openai' ? scaledOpenAi : scaledAnthropic)(tokens).body);
  return smallBodies.get(key)!;
};

const relayChunk = (text: string) => `data: {"id":"chatcmpl-relay","object":"chat.completion.chunk","created":1,"model":"relay","choices":[{"index":0,"delta":{"content":"${text}"},"logprobs":null,"finish_reason":null}]}\n\n`;
const relayEnd =
  'data: {"id":"chatcmpl-relay","object":"chat.completion.chunk","created":1,"model":"relay","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}\n\n' +
  'data: {"id":"chatcmpl-relay","object":"chat.completion.chunk","created":1,"model":"relay","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}\n\ndata: [DONE]\n\n';
const relayBodies = new Map<number, Buffer>();
/** Paced groups waiting for their second request. */
const groups = new Map<string, Array<{ res: http.ServerResponse; done: () => void }>>();

async function pacedGroup(members: Array<{ res: http.ServerResponse; done: () => void }>, tokens: number, pace: number): Promise<void> {
  for (let i = 0; i < tokens; i++) {
    await sleep(pace);
    const chunk = relayChunk((performance.timeOrigin + performance.now()).toFixed(3));
    for (const member of members) member.res.write(chunk);
  }
  for (const member of members) {
    member.res.write(relayEnd);
    member.done();
  }
}

async function writeAll(res: http.ServerResponse, body: Buffer): Promise<void> {
  for (let i = 0; i < body.length && !res.destroyed; i += 16 * 1024) {
    if (!res.write(body.subarray(i, i + 16 * 1024))) await new Promise((resolve) => res.once('drain', resolve));
  }
}

const server = http.createServer(async (req, res) => {
  let raw = '';
  for await (const chunk of req) raw += chunk;
  const request = JSON.parse(raw) as { model: string };
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  if (req.url === '/v1/messages') await writeAll(res, scaledBody('anthropic', request.model));
  else if (request.model.startsWith('scaled')) await writeAll(res, scaledBody('openai', request.model));
  else {
    const [, tokensText, paceText, group] = request.model.split(':');
    const tokens = Number(tokensText);
    const pace = Number(paceText);
    if (pace > 0) {
      await new Promise<void>((done) => {
        const members = groups.get(group) ?? [];
        members.push({ res, done });
        groups.set(group, members);
        if (members.length === 2) {
          groups.delete(group);
          void pacedGroup(members, tokens, pace);
        }
      });
    } else {
      let body = relayBodies.get(tokens);
      if (!body) {
        body = Buffer.from(Array.from({ length: tokens }, () => relayChunk('token ')).join('') + relayEnd);
        relayBodies.set(tokens, body);
      }
      await writeAll(res, body);
    }
  }
  res.end();
});

server.listen(0, '127.0.0.1', () => {
  const port = (server.address() as { port: number }).port;
  process.send?.({ port, openAiEvents: openAiScaled.events, anthropicEvents: anthropicScaled.events });
});
