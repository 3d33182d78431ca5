/**
 * The demo's offline model: a tiny OpenAI-compatible server (`POST /v1/chat/completions`, SSE) on
 * 127.0.0.1, port 0, so `npm start` streams through the real `openAiChat` adapter with no key and
 * no network. It answers the last user message with a fixed sentence, one word per chunk, then
 * the finish chunk, a usage chunk and `[DONE]` — the shape OpenAI streams. The request field
 * `demo_token_delay_ms` (sent by the demo through `providerOptions`) paces the words; a client
 * that leaves stops the writing at once.
 *
 * With `tools` in the request it also plays a tool-using model (for `agent.ask`): a prompt that
 * mentions a word of a tool's name (`weather` for `weather_get`, `stats` for `admin_stats`) gets
 * a turn of streamed tool calls instead (`finish_reason: tool_calls`); string arguments take the
 * word after "in" in the prompt ("the weather in Porto" -> `{ "city": "Porto" }`), numbers the
 * first number; an argument the prompt does not give is left out. A request that ends with tool
 * results is answered with those results, one sentence per tool.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export const offlineReply = (prompt: string) => `You said: "${prompt}". Streaming works: each word is its own event.`;

const DEFAULT_TOKEN_DELAY_MS = 40;

export interface OfflineChatProvider {
  /** The base URL to give `openAiChat({ baseUrl })`. */
  baseUrl: string;
  close(): Promise<void>;
}

export interface ChatCompletionRequest {
  messages?: ChatMessage[];
  tools?: Array<{ type?: string; function?: { name?: string; parameters?: { properties?: Record<string, { type?: unknown }> } } }>;
  demo_token_delay_ms?: number;
}

export interface ChatMessage {
  role: string;
  content?: unknown;
  tool_call_id?: string;
  tool_calls?: Array<{ id?: string; function?: { name?: string } }>;
}

/** A tool call the offline model decided to make. */
export interface OfflineToolCall {
  name: string;
  arguments: Record<string, unknown>;
}

export async function startOfflineChatProvider(): Promise<OfflineChatProvider> {
  const server = http.createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (raw += chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"Not found","type":"invalid_request_error","code":"not_found"}}');
        return;
      }
      let body: ChatCompletionRequest;
      try {
        body = JSON.parse(raw) as ChatCompletionRequest;
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"Invalid JSON","type":"invalid_request_error","code":null}}');
        return;
      }
      void answer(body, res);
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * The calls the offline model makes for `prompt`: every tool one of whose name's words (4 letters
 * or more) the prompt mentions, with the arguments the prompt gives.
 */
export function offlineToolCalls(prompt: string, tools: ChatCompletionRequest['tools'] = []): OfflineToolCall[] {
  const said = prompt.toLowerCase();
  const calls: OfflineToolCall[] = [];
  for (const tool of tools) {
    const name = tool.function?.name;
    if (!name || !name.split(/[_-]/).some((word) => word.length >= 4 && said.includes(word.toLowerCase()))) continue;
    const args: Record<string, unknown> = {};
    for (const [key, schema] of Object.entries(tool.function?.parameters?.properties ?? {})) {
      if (schema?.type === 'string') {
        const place = /\bin\s+([\p{L}][\p{L}\p{N}'-]*)/u.exec(prompt)?.[1];
        if (place) args[key] = place;
      } else if (schema?.type === 'number' || schema?.type === 'integer') {
        const number = /-?\d+(?:\.\d+)?/.exec(prompt)?.[0];
        if (number) args[key] = Number(number);
      }
    }
    calls.push({ name, arguments: args });
  }
  return calls;
}

/** The answer to a conversation that ends with tool results: one sentence per result. */
export function offlineToolReply(messages: readonly ChatMessage[]): string {
  const names = new Map<string, string>();
  for (const message of messages) for (const call of message.tool_calls ?? []) if (call.id && call.function?.name) names.set(call.id, call.function.name);
  let first = messages.length;
  while (first > 0 && messages[first - 1].role === 'tool') first--;
  return messages
    .slice(first)
    .map((result) => {
      const name = names.get(result.tool_call_id ?? '') ?? 'the tool';
      const content = typeof result.content === 'string' ? result.content : JSON.stringify(result.content);
      return content.startsWith('Error ') ? `${name} could not help: ${content}` : `${name} says: ${content}`;
    })
    .join(' ');
}

async function answer(body: ChatCompletionRequest, res: http.ServerResponse): Promise<void> {
  const messages = body.messages ?? [];
  const lastUser = [...messages].reverse().find((m) => m.role === 'user');
  const prompt = typeof lastUser?.content === 'string' ? lastUser.content : '';
  const afterTools = messages.at(-1)?.role === 'tool';
  const calls = afterTools ? [] : offlineToolCalls(prompt, body.tools);
  const words = calls.length ? [] : ((afterTools ? offlineToolReply(messages) : offlineReply(prompt)).match(/\S+\s*/g) ?? []);
  // Words, not tokens: this model has no tokenizer.
  const promptWords = prompt.split(/\s+/).filter(Boolean).length;
  const delayMs = typeof body.demo_token_delay_ms === 'number' ? body.demo_token_delay_ms : DEFAULT_TOKEN_DELAY_MS;
  const gone = new AbortController();
  res.once('close', () => gone.abort());
  const chunk = (delta: Record<string, unknown>, finishReason: string | null) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-offline', object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: 'offline-demo', choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  try {
    res.write(chunk({ role: 'assistant', content: calls.length ? null : '' }, null));
    for (const word of words) {
      await sleep(delayMs, undefined, { signal: gone.signal });
      res.write(chunk({ content: word }, null));
    }
    for (let index = 0; index < calls.length; index++) {
      // As OpenAI streams a call: the name first, then the arguments in fragments.
      const json = JSON.stringify(calls[index].arguments);
      const half = Math.ceil(json.length / 2);
      await sleep(delayMs, undefined, { signal: gone.signal });
      res.write(chunk({ tool_calls: [{ index, id: `call_offline_${index}`, type: 'function', function: { name: calls[index].name, arguments: '' } }] }, null));
      for (const piece of [json.slice(0, half), json.slice(half)]) res.write(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }, null));
    }
    const completion = calls.length ? calls.length : words.length;
    res.write(chunk({}, calls.length ? 'tool_calls' : 'stop'));
    res.write(`data: ${JSON.stringify({ id: 'chatcmpl-offline', object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: promptWords, completion_tokens: completion, total_tokens: promptWords + completion } })}\n\n`);
    res.end('data: [DONE]\n\n');
  } catch {
    // The client left (the demo aborted the call): nothing more to write.
    res.destroy();
  }
}
