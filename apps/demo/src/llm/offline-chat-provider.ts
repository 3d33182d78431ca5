/**
 * The demo's offline model: a tiny OpenAI-compatible server (`POST /v1/chat/completions`, SSE) on
 * 127.0.0.1, port 0, so `npm start` streams through the real `openAiChat` adapter with no key and
 * no network. It answers the last user message with a fixed sentence, one word per chunk, then
 * the finish chunk, a usage chunk and `[DONE]` — the shape OpenAI streams. The request field
 * `demo_token_delay_ms` (sent by the demo through `providerOptions`) paces the words; a client
 * that leaves stops the writing at once.
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

interface ChatCompletionRequest {
  messages?: Array<{ role: string; content?: unknown }>;
  demo_token_delay_ms?: number;
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

async function answer(body: ChatCompletionRequest, res: http.ServerResponse): Promise<void> {
  const lastUser = [...(body.messages ?? [])].reverse().find((m) => m.role === 'user');
  const prompt = typeof lastUser?.content === 'string' ? lastUser.content : '';
  const words = offlineReply(prompt).match(/\S+\s*/g) ?? [];
  // Words, not tokens: this model has no tokenizer.
  const promptWords = prompt.split(/\s+/).filter(Boolean).length;
  const delayMs = typeof body.demo_token_delay_ms === 'number' ? body.demo_token_delay_ms : DEFAULT_TOKEN_DELAY_MS;
  const gone = new AbortController();
  res.once('close', () => gone.abort());
  const chunk = (delta: Record<string, unknown>, finishReason: string | null) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-offline', object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: 'offline-demo', choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  try {
    res.write(chunk({ role: 'assistant', content: '' }, null));
    for (const word of words) {
      await sleep(delayMs, undefined, { signal: gone.signal });
      res.write(chunk({ content: word }, null));
    }
    res.write(chunk({}, 'stop'));
    res.write(`data: ${JSON.stringify({ id: 'chatcmpl-offline', object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: promptWords, completion_tokens: words.length, total_tokens: promptWords + words.length } })}\n\n`);
    res.end('data: [DONE]\n\n');
  } catch {
    // The client left (the demo aborted the call): nothing more to write.
    res.destroy();
  }
}
