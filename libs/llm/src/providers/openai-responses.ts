/**
 * OpenAI Responses (`POST {baseUrl}/responses`, `stream: true`): semantic SSE events —
 * `response.output_text.delta`, reasoning summary / text deltas, function calls opened by
 * `response.output_item.added`, filled by `response.function_call_arguments.delta` and closed by
 * `response.output_item.done`; the turn ends with `response.completed` / `response.incomplete`
 * (usage inside), or `error` / `response.failed`.
 */
import type { EventSourceMessage } from 'eventsource-parser';
import type { LlmFinishReason, LlmUsage } from '../model/events.js';
import type { LlmMessage, LlmProvider, LlmProviderOptions, LlmRequest } from '../model/request.js';
import { ToolCallAccumulator } from '../tool-calls/tool-call-accumulator.js';
import { runProviderStream } from '../transport/provider-stream.js';
import { SseDecoder, type SseTurnParser } from '../transport/sse-decoder.js';
import { compactUsage, TurnParser } from '../transport/turn-parser.js';
import { describeOpenAiError, OPENAI_DEFAULT_BASE_URL } from './openai-chat.js';
import { defineProvider, envVar, firstString, resolveFetch, withoutTrailingSlash, withProviderOptions } from './shared.js';

/** `apiKey` defaults to `OPENAI_API_KEY`. */
export function openAiResponses(options: LlmProviderOptions = {}): LlmProvider {
  const name = 'openai-responses';
  const baseUrl = withoutTrailingSlash(options.baseUrl ?? OPENAI_DEFAULT_BASE_URL);
  const doFetch = resolveFetch(options);
  return defineProvider(name, (request, streamOptions) => {
    const apiKey = options.apiKey ?? envVar('OPENAI_API_KEY');
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'text/event-stream' };
    if (apiKey) headers.authorization = `Bearer ${apiKey}`;
    const parser = new OpenAiResponsesParser(name, streamOptions.raw === true);
    return runProviderStream(
      {
        provider: name,
        url: `${baseUrl}/responses`,
        headers: { ...headers, ...options.headers },
        body: withProviderOptions(toOpenAiResponsesBody(request), request),
        fetch: doFetch,
        describeError: describeOpenAiError,
      },
      streamOptions.signal,
      parser,
      new SseDecoder(parser),
    );
  });
}

export function toOpenAiResponsesBody(request: LlmRequest): Record<string, unknown> {
  const body: Record<string, unknown> = { model: request.model, input: toResponsesInput(request.messages), stream: true };
  if (request.system) body.instructions = request.system;
  if (request.tools?.length) {
    // strict: false — the Responses API defaults function tools to strict mode, which rejects
    // ordinary JSON Schemas (optional properties, no additionalProperties: false).
    body.tools = request.tools.map((tool) => ({
      type: 'function',
      name: tool.name,
      ...(tool.description ? { description: tool.description } : {}),
      parameters: tool.parameters,
      strict: false,
    }));
    if (request.toolChoice) body.tool_choice = typeof request.toolChoice === 'string' ? request.toolChoice : { type: 'function', name: request.toolChoice.name };
  }
  if (request.maxTokens !== undefined) body.max_output_tokens = request.maxTokens;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  return body;
}

function toResponsesInput(messages: LlmMessage[]): unknown[] {
  const input: unknown[] = [];
  for (const message of messages) {
    if (message.role === 'user') input.push({ role: 'user', content: message.content });
    else if (message.role === 'tool') input.push({ type: 'function_call_output', call_id: message.toolCallId, output: message.content });
    else {
      if (message.content) input.push({ role: 'assistant', content: message.content });
      for (const call of message.toolCalls ?? []) {
        input.push({ type: 'function_call', call_id: call.id, name: call.name, arguments: JSON.stringify(call.arguments ?? {}) });
      }
    }
  }
  return input;
}

const INCOMPLETE_REASONS: Record<string, LlmFinishReason> = { max_output_tokens: 'length', content_filter: 'content-filter' };

function responsesUsage(usage: Record<string, any> | undefined | null): LlmUsage | undefined {
  if (!usage) return undefined;
  return compactUsage({
    inputTokens: usage.input_tokens,
    outputTokens: usage.output_tokens,
    totalTokens: usage.total_tokens,
    cachedInputTokens: usage.input_tokens_details?.cached_tokens,
    reasoningTokens: usage.output_tokens_details?.reasoning_tokens,
  });
}

class OpenAiResponsesParser extends TurnParser implements SseTurnParser {
  private readonly toolCalls = new ToolCallAccumulator();
  private readonly outputIndexByItemId = new Map<string, number>();
  private readonly streamedArguments = new Set<number>();
  private calledTools = false;

  onSse(event: EventSourceMessage): void {
    if (event.data === '[DONE]') return;
    const data = this.parseJson(event.data);
    if (data === undefined) return;
    this.emitRaw(event.event, data);
    switch (data.type) {
      case 'response.output_text.delta':
      case 'response.refusal.delta':
        if (data.delta) this.out.push({ type: 'text', delta: data.delta });
        return;
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        if (data.delta) this.out.push({ type: 'reasoning', delta: data.delta });
        return;
      case 'response.function_call_arguments.delta': {
        const index = data.output_index ?? this.outputIndexByItemId.get(data.item_id);
        if (index !== undefined && this.toolCalls.has(index)) {
          this.streamedArguments.add(index);
          this.toolCalls.add({ index, arguments: data.delta });
        }
        return;
      }
      case 'response.output_item.added': {
        const item = data.item;
        if (item?.type === 'function_call') {
          if (item.id) this.outputIndexByItemId.set(item.id, data.output_index);
          this.toolCalls.add({ index: data.output_index, id: item.call_id, name: item.name });
        }
        return;
      }
      case 'response.output_item.done': {
        const item = data.item;
        if (item?.type !== 'function_call' || !this.toolCalls.has(data.output_index)) return;
        // Arguments that arrived whole, with no deltas, are in the finished item.
        if (!this.streamedArguments.has(data.output_index) && item.arguments) this.toolCalls.add({ index: data.output_index, arguments: item.arguments });
        const call = this.toolCalls.completeIndex(data.output_index);
        if (call) {
          this.calledTools = true;
          this.out.push(call);
        }
        return;
      }
      case 'response.completed':
        this.reason = this.calledTools ? 'tool-calls' : 'stop';
        this.endTurn(data.response, data.response?.status);
        return;
      case 'response.incomplete': {
        const why = data.response?.incomplete_details?.reason;
        this.reason = INCOMPLETE_REASONS[why] ?? 'other';
        this.endTurn(data.response, why);
        return;
      }
      case 'response.failed': {
        const error = data.response?.error ?? {};
        this.fail(undefined, firstString(error.code, error.type) ?? 'response_failed', firstString(error.message) ?? 'The response failed', data);
        return;
      }
      case 'error': {
        // Current shape { error: { type, code, message } }; older streams put the fields at the top.
        const error = data.error ?? data;
        this.fail(undefined, firstString(error.code, error.type) ?? 'error', firstString(error.message) ?? 'The provider reported an error', data);
        return;
      }
      default:
        return;
    }
  }

  end(): void {
    if (!this.finished) this.failTruncated();
  }

  private endTurn(response: Record<string, any> | undefined, rawReason: string | undefined): void {
    if (this.toolCalls.size) {
      this.calledTools = true;
      this.out.push(...this.toolCalls.complete());
      if (this.reason === 'stop') this.reason = 'tool-calls';
    }
    if (rawReason) this.rawReason = rawReason;
    this.usage = responsesUsage(response?.usage);
    this.finish();
  }
}
