import type { LlmEvent } from '../model/events.js';
import { openAiChat } from './openai-chat.js';

const fetchBody = (body: string) =>
  (async () => new Response(body, { headers: { 'content-type': 'text/event-stream' } })) as unknown as typeof fetch;

const drain = async (stream: AsyncIterable<LlmEvent>) => {
  const events: LlmEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
};

const request = { model: 'm', messages: [{ role: 'user' as const, content: 'hi' }] };

describe('openAiChat parsing details of compatible servers', () => {
  it('tool-call deltas without index: a new id starts the next call, fragments without id continue the current one', async () => {
    const chunk = (delta: unknown, finish: string | null = null) => `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    const body =
      chunk({ tool_calls: [{ id: 'a', type: 'function', function: { name: 'add', arguments: '{"x":' } }] }) +
      chunk({ tool_calls: [{ function: { arguments: '1}' } }] }) +
      chunk({ tool_calls: [{ id: 'b', type: 'function', function: { name: 'neg', arguments: '{"x":2}' } }] }) +
      chunk({}, 'tool_calls') +
      'data: [DONE]\n\n';
    expect(await drain(openAiChat({ fetch: fetchBody(body) }).stream(request))).toEqual([
      { type: 'tool-call', id: 'a', name: 'add', arguments: { x: 1 }, rawArguments: '{"x":1}' },
      { type: 'tool-call', id: 'b', name: 'neg', arguments: { x: 2 }, rawArguments: '{"x":2}' },
      { type: 'finish', reason: 'tool-calls', rawReason: 'tool_calls' },
    ]);
  });

  it('reasoning deltas (reasoning_content, reasoning), a server closing without [DONE], other choices ignored', async () => {
    const body =
      'data: {"choices":[{"index":0,"delta":{"reasoning_content":"Let me think."}}]}\n\n' +
      'data: {"choices":[{"index":0,"delta":{"reasoning":" Done."}}]}\n\n' +
      'data: {"choices":[{"index":1,"delta":{"content":"other choice"}}]}\n\n' +
      'data: {"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5,"prompt_tokens_details":{"cached_tokens":1},"completion_tokens_details":{"reasoning_tokens":1}}}\n\n';
    expect(await drain(openAiChat({ fetch: fetchBody(body) }).stream(request))).toEqual([
      { type: 'reasoning', delta: 'Let me think.' },
      { type: 'reasoning', delta: ' Done.' },
      { type: 'text', delta: 'Hi' },
      { type: 'finish', reason: 'stop', rawReason: 'stop', usage: { inputTokens: 3, outputTokens: 2, totalTokens: 5, cachedInputTokens: 1, reasoningTokens: 1 } },
    ]);
  });
});
