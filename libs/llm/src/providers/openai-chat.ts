/**
 * OpenAI Chat Completions (`POST {baseUrl}/chat/completions`, `stream: true`): `data:` chunks with
 * text deltas and indexed tool-call fragments, a `finish_reason`, a usage chunk after it (asked for
 * with `stream_options.include_usage`), then `data: [DONE]`. Works for OpenAI-compatible servers
 * (Mistral, xAI, Groq, vLLM, Ollama, OpenRouter, ...) through `baseUrl`; their `reasoning_content`
 * / `reasoning` deltas become `reasoning` events.
 */
import type { EventSourceMessage } from 'eventsource-parser';
import type { LlmFinishReason, LlmUsage } from '../model/events.js';
import type { LlmMessage, LlmProvider, LlmProviderOptions, LlmRequest, LlmToolChoice } from '../model/request.js';
import { ToolCallAccumulator } from '../tool-calls/tool-call-accumulator.js';
import { genericErrorDescription, runProviderStream } from '../transport/provider-stream.js';
import { SseDecoder, type SseTurnParser } from '../transport/sse-decoder.js';
import { compactUsage, TurnParser } from '../transport/turn-parser.js';
import { defineProvider, envVar, firstString, resolveFetch, withoutTrailingSlash, withProviderOptions } from './shared.js';

export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';

export interface OpenAiChatOptions extends LlmProviderOptions {
  /**
   * The body field `maxTokens` goes to. OpenAI's own API wants `max_completion_tokens` (reasoning
   * models reject `max_tokens`); many compatible servers only know `max_tokens`. Default:
   * `max_completion_tokens` for the default base URL, `max_tokens` for any other.
   */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens';
}

/** `apiKey` defaults to `OPENAI_API_KEY`; no `Authorization` header is sent without a key (local servers). */
export function openAiChat(options: OpenAiChatOptions = {}): LlmProvider {
  const name = 'openai-chat';
  const baseUrl = withoutTrailingSlash(options.baseUrl ?? OPENAI_DEFAULT_BASE_URL);
  const maxTokensField = options.maxTokensField ?? (options.baseUrl === undefined ? 'max_completion_tokens' : 'max_tokens');
  const doFetch = resolveFetch(options);
  return defineProvider(name, (request, streamOptions) => {
    const apiKey = options.apiKey ?? envVar('OPENAI_API_KEY');
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'text/event-stream' };
    if (apiKey) headers.authorization = `Bearer ${apiKey}`;
    const parser = new OpenAiChatParser(name, streamOptions.raw === true);
    return runProviderStream(
      {
        provider: name,
        url: `${baseUrl}/chat/completions`,
        headers: { ...headers, ...options.headers },
        body: withProviderOptions(toOpenAiChatBody(request, maxTokensField), request),
        fetch: doFetch,
        describeError: describeOpenAiError,
      },
      streamOptions.signal,
      parser,
      new SseDecoder(parser),
    );
  });
}

/** The Chat Completions request body for the one request shape. */
export function toOpenAiChatBody(request: LlmRequest, maxTokensField: 'max_tokens' | 'max_completion_tokens'): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: request.model,
    messages: toOpenAiChatMessages(request.system, request.messages),
    stream: true,
    stream_options: { include_usage: true },
  };
  if (request.tools?.length) {
    body.tools = request.tools.map((tool) => ({
      type: 'function',
      function: { name: tool.name, ...(tool.description ? { description: tool.description } : {}), parameters: tool.parameters },
    }));
    if (request.toolChoice) body.tool_choice = openAiToolChoice(request.toolChoice);
  }
  if (request.maxTokens !== undefined) body[maxTokensField] = request.maxTokens;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  return body;
}

function toOpenAiChatMessages(system: string | undefined, messages: LlmMessage[]): unknown[] {
  const out: unknown[] = [];
  if (system) out.push({ role: 'system', content: system });
  for (const message of messages) {
    if (message.role === 'user') out.push({ role: 'user', content: message.content });
    else if (message.role === 'tool') out.push({ role: 'tool', tool_call_id: message.toolCallId, content: message.content });
    else {
      const assistant: Record<string, unknown> = { role: 'assistant', content: message.content ? message.content : null };
      if (message.toolCalls?.length) {
        assistant.tool_calls = message.toolCalls.map((call) => ({
          id: call.id,
          type: 'function',
          function: { name: call.name, arguments: JSON.stringify(call.arguments ?? {}) },
        }));
      }
      out.push(assistant);
    }
  }
  return out;
}

function openAiToolChoice(choice: LlmToolChoice): unknown {
  return typeof choice === 'string' ? choice : { type: 'function', function: { name: choice.name } };
}

const FINISH_REASONS: Record<string, LlmFinishReason> = {
  stop: 'stop',
  length: 'length',
  tool_calls: 'tool-calls',
  function_call: 'tool-calls',
  content_filter: 'content-filter',
};

export function openAiUsage(usage: Record<string, any>): LlmUsage | undefined {
  return compactUsage({
    inputTokens: usage.prompt_tokens,
    outputTokens: usage.completion_tokens,
    totalTokens: usage.total_tokens,
    cachedInputTokens: usage.prompt_tokens_details?.cached_tokens,
    reasoningTokens: usage.completion_tokens_details?.reasoning_tokens,
  });
}

/** OpenAI-shaped error bodies: `{ error: { message, type, code } }` (also used by most compatible servers). */
export function describeOpenAiError(status: number, body: unknown): { type: string; message: string } {
  const error = (body as { error?: Record<string, unknown> } | undefined)?.error;
  if (error && typeof error === 'object') {
    return { type: firstString(error.code, error.type) ?? `http_${status}`, message: firstString(error.message) ?? `HTTP ${status}` };
  }
  return genericErrorDescription(status, body);
}

class OpenAiChatParser extends TurnParser implements SseTurnParser {
  private readonly toolCalls = new ToolCallAccumulator();
  /** For servers that omit `index` on tool-call deltas: a new `id` starts the next call. */
  private implicitIndex = -1;
  private implicitId: string | undefined;

  onSse(event: EventSourceMessage): void {
    const data = event.data;
    if (data === '[DONE]') {
      this.emitRaw(event.event, data);
      this.completeTurn();
      return;
    }
    const chunk = this.parseJson(data);
    if (chunk === undefined) return;
    this.emitRaw(event.event, chunk);
    if (chunk.error) {
      const error = chunk.error;
      this.fail(typeof error.status === 'number' ? error.status : undefined, firstString(error.code, error.type) ?? 'error', firstString(error.message) ?? 'The provider reported an error', chunk);
      return;
    }
    if (chunk.usage) this.usage = openAiUsage(chunk.usage);
    const choices = chunk.choices;
    if (!choices) return;
    for (let i = 0; i < choices.length; i++) {
      const choice = choices[i];
      // One answer per stream: other choices (n > 1) are not mixed into it.
      if (choice.index !== undefined && choice.index !== 0) continue;
      const delta = choice.delta;
      if (delta) {
        const reasoning = delta.reasoning_content ?? delta.reasoning;
        if (typeof reasoning === 'string' && reasoning !== '') this.out.push({ type: 'reasoning', delta: reasoning });
        if (typeof delta.content === 'string' && delta.content !== '') this.out.push({ type: 'text', delta: delta.content });
        if (typeof delta.refusal === 'string' && delta.refusal !== '') this.out.push({ type: 'text', delta: delta.refusal });
        const calls = delta.tool_calls;
        if (calls) {
          for (const call of calls) {
            this.toolCalls.add({ index: call.index ?? this.indexWithoutIndex(call.id), id: call.id, name: call.function?.name, arguments: call.function?.arguments });
          }
        }
      }
      if (choice.finish_reason) {
        this.rawReason = choice.finish_reason;
        this.reason = FINISH_REASONS[choice.finish_reason] ?? 'other';
        // The calls are complete; the usage chunk may still follow, so `finish` waits for [DONE].
        this.out.push(...this.toolCalls.complete());
      }
    }
  }

  private indexWithoutIndex(id: string | undefined): number {
    if (this.implicitIndex < 0 || (id && id !== this.implicitId)) {
      this.implicitIndex++;
      this.implicitId = id;
    }
    return this.implicitIndex;
  }

  end(): void {
    // Some compatible servers close without [DONE]; a finish_reason seen means the turn ended.
    if (this.reason !== undefined) this.completeTurn();
    else if (!this.finished) this.failTruncated();
  }

  private completeTurn(): void {
    if (this.finished) return;
    if (this.toolCalls.size) this.out.push(...this.toolCalls.complete());
    this.finish();
  }
}
