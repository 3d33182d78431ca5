/**
 * Anthropic Messages (`POST {baseUrl}/v1/messages`, `stream: true`): typed SSE events —
 * `message_start` (input usage), content blocks (`text_delta`, `thinking_delta`, a tool's
 * `input_json_delta` fragments closed by `content_block_stop`), `message_delta` (stop reason,
 * output usage), `message_stop`; `ping` is skipped and `error` becomes an `LlmProviderError`.
 */
import type { EventSourceMessage } from 'eventsource-parser';
import type { LlmFinishReason } from '../model/events.js';
import type { LlmMessage, LlmProvider, LlmProviderOptions, LlmRequest, LlmToolChoice } from '../model/request.js';
import { ToolCallAccumulator } from '../tool-calls/tool-call-accumulator.js';
import { genericErrorDescription, runProviderStream } from '../transport/provider-stream.js';
import { SseDecoder, type SseTurnParser } from '../transport/sse-decoder.js';
import { compactUsage, TurnParser } from '../transport/turn-parser.js';
import { defineProvider, envVar, firstString, resolveFetch, toBlockTurns, withoutTrailingSlash, withProviderOptions, type ContentBlock } from './shared.js';

export const ANTHROPIC_DEFAULT_BASE_URL = 'https://api.anthropic.com';
export const ANTHROPIC_VERSION = '2023-06-01';
/** Anthropic requires `max_tokens`; this is sent when the request has no `maxTokens`. */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 4096;

/** `apiKey` defaults to `ANTHROPIC_API_KEY`; sent as `x-api-key` with `anthropic-version: 2023-06-01`. */
export function anthropicMessages(options: LlmProviderOptions = {}): LlmProvider {
  const name = 'anthropic-messages';
  const baseUrl = withoutTrailingSlash(options.baseUrl ?? ANTHROPIC_DEFAULT_BASE_URL);
  const doFetch = resolveFetch(options);
  return defineProvider(name, (request, streamOptions) => {
    const apiKey = options.apiKey ?? envVar('ANTHROPIC_API_KEY');
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'text/event-stream', 'anthropic-version': ANTHROPIC_VERSION };
    if (apiKey) headers['x-api-key'] = apiKey;
    const parser = new AnthropicParser(name, streamOptions.raw === true);
    return runProviderStream(
      {
        provider: name,
        url: `${baseUrl}/v1/messages`,
        headers: { ...headers, ...options.headers },
        body: withProviderOptions(toAnthropicBody(request), request),
        fetch: doFetch,
        describeError: describeAnthropicError,
      },
      streamOptions.signal,
      parser,
      new SseDecoder(parser),
    );
  });
}

export function toAnthropicBody(request: LlmRequest): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: request.model,
    max_tokens: request.maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS,
    messages: toBlockTurns(request.messages, anthropicBlocks),
    stream: true,
  };
  if (request.system) body.system = request.system;
  if (request.tools?.length) {
    body.tools = request.tools.map((tool) => ({ name: tool.name, ...(tool.description ? { description: tool.description } : {}), input_schema: tool.parameters }));
    if (request.toolChoice) body.tool_choice = anthropicToolChoice(request.toolChoice);
  }
  if (request.temperature !== undefined) body.temperature = request.temperature;
  return body;
}

/** Anthropic's blocks for one message (turn grouping: `toBlockTurns`). */
function anthropicBlocks(message: LlmMessage): ContentBlock[] {
  if (message.role === 'user') return message.content ? [{ type: 'text', text: message.content }] : [];
  if (message.role === 'tool') {
    const result: ContentBlock = { type: 'tool_result', tool_use_id: message.toolCallId, content: message.content };
    if (message.isError) result.is_error = true;
    return [result];
  }
  const blocks: ContentBlock[] = message.content ? [{ type: 'text', text: message.content }] : [];
  for (const call of message.toolCalls ?? []) blocks.push({ type: 'tool_use', id: call.id, name: call.name, input: call.arguments ?? {} });
  return blocks;
}

function anthropicToolChoice(choice: LlmToolChoice): unknown {
  if (choice === 'auto') return { type: 'auto' };
  if (choice === 'none') return { type: 'none' };
  if (choice === 'required') return { type: 'any' };
  return { type: 'tool', name: choice.name };
}

/** Shared with Bedrock Converse, whose stop reasons are Anthropic's words. */
export const ANTHROPIC_FINISH_REASONS: Record<string, LlmFinishReason> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool-calls',
  refusal: 'content-filter',
};

/** `{ type: 'error', error: { type, message } }` */
export function describeAnthropicError(status: number, body: unknown): { type: string; message: string } {
  const error = (body as { error?: Record<string, unknown> } | undefined)?.error;
  if (error && typeof error === 'object') return { type: firstString(error.type) ?? `http_${status}`, message: firstString(error.message) ?? `HTTP ${status}` };
  return genericErrorDescription(status, body);
}

class AnthropicParser extends TurnParser implements SseTurnParser {
  private readonly toolCalls = new ToolCallAccumulator();
  private inputTokens: number | undefined;
  private cacheRead: number | undefined;
  private cacheCreation: number | undefined;
  private outputTokens: number | undefined;

  onSse(event: EventSourceMessage): void {
    const data = this.parseJson(event.data);
    if (data === undefined) return;
    this.emitRaw(event.event, data);
    switch (data.type) {
      case 'content_block_delta': {
        const delta = data.delta;
        if (delta.type === 'text_delta') {
          if (delta.text) this.out.push({ type: 'text', delta: delta.text });
        } else if (delta.type === 'thinking_delta') {
          if (delta.thinking) this.out.push({ type: 'reasoning', delta: delta.thinking });
        } else if (delta.type === 'input_json_delta') {
          // Only client tools are accumulated: server tools (web search, ...) run at Anthropic.
          if (this.toolCalls.has(data.index)) this.toolCalls.add({ index: data.index, arguments: delta.partial_json });
        }
        return;
      }
      case 'content_block_start': {
        const block = data.content_block;
        if (block.type === 'tool_use') this.toolCalls.add({ index: data.index, id: block.id, name: block.name });
        else if (block.type === 'text' && block.text) this.out.push({ type: 'text', delta: block.text });
        else if (block.type === 'thinking' && block.thinking) this.out.push({ type: 'reasoning', delta: block.thinking });
        return;
      }
      case 'content_block_stop': {
        const call = this.toolCalls.completeIndex(data.index);
        if (call) this.out.push(call);
        return;
      }
      case 'message_start':
        this.takeUsage(data.message?.usage);
        return;
      case 'message_delta':
        if (data.delta?.stop_reason) {
          this.rawReason = data.delta.stop_reason;
          this.reason = ANTHROPIC_FINISH_REASONS[data.delta.stop_reason] ?? 'other';
        }
        this.takeUsage(data.usage);
        return;
      case 'message_stop':
        this.completeTurn();
        return;
      case 'error': {
        const error = data.error ?? {};
        this.fail(undefined, firstString(error.type) ?? 'error', firstString(error.message) ?? 'The provider reported an error', data);
        return;
      }
      default:
        // ping and event types added later: nothing to normalise.
        return;
    }
  }

  end(): void {
    if (this.reason !== undefined) this.completeTurn();
    else if (!this.finished) this.failTruncated();
  }

  /** message_start carries the input counts, message_delta the (cumulative) output count and sometimes input again. */
  private takeUsage(usage: Record<string, any> | undefined): void {
    if (!usage) return;
    if (typeof usage.input_tokens === 'number') this.inputTokens = usage.input_tokens;
    if (typeof usage.cache_read_input_tokens === 'number') this.cacheRead = usage.cache_read_input_tokens;
    if (typeof usage.cache_creation_input_tokens === 'number') this.cacheCreation = usage.cache_creation_input_tokens;
    if (typeof usage.output_tokens === 'number') this.outputTokens = usage.output_tokens;
  }

  private completeTurn(): void {
    if (this.finished) return;
    // A tool block cut by max_tokens never got its content_block_stop: deliver it with its error.
    if (this.toolCalls.size) this.out.push(...this.toolCalls.complete());
    const input = this.inputTokens === undefined ? undefined : this.inputTokens + (this.cacheRead ?? 0) + (this.cacheCreation ?? 0);
    this.usage = compactUsage({
      inputTokens: input,
      outputTokens: this.outputTokens,
      totalTokens: input !== undefined && this.outputTokens !== undefined ? input + this.outputTokens : undefined,
      cachedInputTokens: this.cacheRead,
    });
    this.finish();
  }
}
