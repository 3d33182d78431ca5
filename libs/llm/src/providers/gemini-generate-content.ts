/**
 * Gemini (`POST {baseUrl}/models/{model}:streamGenerateContent?alt=sse`): each SSE `data:` is a
 * whole `GenerateContentResponse` chunk — text parts (`thought: true` ones are reasoning), whole
 * `functionCall` parts (or, on Vertex AI with `streamFunctionCallArguments`, calls streamed as
 * `partialArgs` until `willContinue` is false), a `finishReason`, and cumulative `usageMetadata`.
 * There is no end marker: the turn ends with the body.
 */
import type { EventSourceMessage } from 'eventsource-parser';
import type { LlmFinishReason, LlmToolCallEvent } from '../model/events.js';
import type { LlmMessage, LlmProvider, LlmProviderOptions, LlmRequest, LlmToolChoice } from '../model/request.js';
import { JsonPathAssembler, type PartialArgument } from '../tool-calls/json-path-assembler.js';
import { genericErrorDescription, runProviderStream } from '../transport/provider-stream.js';
import { SseDecoder, type SseTurnParser } from '../transport/sse-decoder.js';
import { compactUsage, TurnParser } from '../transport/turn-parser.js';
import { defineProvider, envVar, firstString, resolveFetch, withoutTrailingSlash, withProviderOptions } from './shared.js';

export const GEMINI_DEFAULT_BASE_URL = 'https://generativelanguage.googleapis.com/v1beta';

/**
 * `apiKey` defaults to `GEMINI_API_KEY` (then `GOOGLE_API_KEY`), sent as `x-goog-api-key`. For
 * Vertex AI pass its `.../publishers/google` URL as `baseUrl` and an `authorization` header.
 */
export function geminiGenerateContent(options: LlmProviderOptions = {}): LlmProvider {
  const name = 'gemini-generate-content';
  const baseUrl = withoutTrailingSlash(options.baseUrl ?? GEMINI_DEFAULT_BASE_URL);
  const doFetch = resolveFetch(options);
  return defineProvider(name, (request, streamOptions) => {
    const apiKey = options.apiKey ?? envVar('GEMINI_API_KEY') ?? envVar('GOOGLE_API_KEY');
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'text/event-stream' };
    if (apiKey) headers['x-goog-api-key'] = apiKey;
    const model = request.model.startsWith('models/') ? request.model : `models/${request.model}`;
    const parser = new GeminiParser(name, streamOptions.raw === true);
    return runProviderStream(
      {
        provider: name,
        url: `${baseUrl}/${model}:streamGenerateContent?alt=sse`,
        headers: { ...headers, ...options.headers },
        body: withProviderOptions(toGeminiBody(request), request),
        fetch: doFetch,
        describeError: describeGeminiError,
      },
      streamOptions.signal,
      parser,
      new SseDecoder(parser),
    );
  });
}

/** The provider data a Gemini call carries back: its own id (when Gemini gave one) and thought signature. */
interface GeminiCallMetadata {
  id?: string;
  thoughtSignature?: string;
}

export function toGeminiBody(request: LlmRequest): Record<string, unknown> {
  const body: Record<string, unknown> = { contents: toGeminiContents(request.messages) };
  if (request.system) body.systemInstruction = { parts: [{ text: request.system }] };
  if (request.tools?.length) {
    // parametersJsonSchema takes a JSON Schema as it is (the older `parameters` wants Gemini's OpenAPI subset).
    body.tools = [
      {
        functionDeclarations: request.tools.map((tool) => ({
          name: tool.name,
          ...(tool.description ? { description: tool.description } : {}),
          parametersJsonSchema: tool.parameters,
        })),
      },
    ];
    if (request.toolChoice) body.toolConfig = { functionCallingConfig: geminiToolChoice(request.toolChoice) };
  }
  const generationConfig: Record<string, unknown> = {};
  if (request.maxTokens !== undefined) generationConfig.maxOutputTokens = request.maxTokens;
  if (request.temperature !== undefined) generationConfig.temperature = request.temperature;
  if (Object.keys(generationConfig).length) body.generationConfig = generationConfig;
  return body;
}

type Part = Record<string, unknown>;

function toGeminiContents(messages: LlmMessage[]): Array<{ role: 'user' | 'model'; parts: Part[] }> {
  const contents: Array<{ role: 'user' | 'model'; parts: Part[] }> = [];
  const providerIds = new Map<string, string>();
  const append = (role: 'user' | 'model', parts: Part[]) => {
    if (!parts.length) return;
    const last = contents.at(-1);
    if (last && last.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };
  for (const message of messages) {
    if (message.role === 'user') append('user', message.content ? [{ text: message.content }] : []);
    else if (message.role === 'tool') {
      // functionResponse carries the tool's name (Gemini matches responses to calls by name and order).
      const id = providerIds.get(message.toolCallId);
      const response = message.isError ? { error: message.content } : { output: message.content };
      append('user', [{ functionResponse: { ...(id ? { id } : {}), name: message.name, response } }]);
    } else {
      const parts: Part[] = message.content ? [{ text: message.content }] : [];
      for (const call of message.toolCalls ?? []) {
        const meta = call.providerMetadata?.gemini as GeminiCallMetadata | undefined;
        if (meta?.id) providerIds.set(call.id, meta.id);
        const part: Part = { functionCall: { ...(meta?.id ? { id: meta.id } : {}), name: call.name, args: call.arguments ?? {} } };
        if (meta?.thoughtSignature) part.thoughtSignature = meta.thoughtSignature;
        parts.push(part);
      }
      append('model', parts);
    }
  }
  return contents;
}

function geminiToolChoice(choice: LlmToolChoice): Record<string, unknown> {
  if (choice === 'auto') return { mode: 'AUTO' };
  if (choice === 'none') return { mode: 'NONE' };
  if (choice === 'required') return { mode: 'ANY' };
  return { mode: 'ANY', allowedFunctionNames: [choice.name] };
}

const FINISH_REASONS: Record<string, LlmFinishReason> = {
  STOP: 'stop',
  MAX_TOKENS: 'length',
  SAFETY: 'content-filter',
  RECITATION: 'content-filter',
  BLOCKLIST: 'content-filter',
  PROHIBITED_CONTENT: 'content-filter',
  SPII: 'content-filter',
  IMAGE_SAFETY: 'content-filter',
  MALFORMED_FUNCTION_CALL: 'error',
  UNEXPECTED_TOOL_CALL: 'error',
};

/** `{ error: { code, message, status } }` */
export function describeGeminiError(status: number, body: unknown): { type: string; message: string } {
  const error = (body as { error?: Record<string, unknown> } | undefined)?.error ?? (Array.isArray(body) ? (body[0] as { error?: Record<string, unknown> })?.error : undefined);
  if (error && typeof error === 'object') return { type: firstString(error.status) ?? `http_${status}`, message: firstString(error.message) ?? `HTTP ${status}` };
  return genericErrorDescription(status, body);
}

class GeminiParser extends TurnParser implements SseTurnParser {
  private callCount = 0;
  /** A call whose arguments are still streaming (Vertex AI `partialArgs`). */
  private streaming: { id?: string; name?: string; thoughtSignature?: string; args: JsonPathAssembler } | undefined;

  onSse(event: EventSourceMessage): void {
    const data = this.parseJson(event.data);
    if (data === undefined) return;
    this.emitRaw(event.event, data);
    if (data.error) {
      const error = data.error;
      this.fail(typeof error.code === 'number' ? error.code : undefined, firstString(error.status) ?? 'error', firstString(error.message) ?? 'The provider reported an error', data);
      return;
    }
    if (data.usageMetadata) {
      const usage = data.usageMetadata;
      const thoughts = usage.thoughtsTokenCount;
      this.usage = compactUsage({
        inputTokens: usage.promptTokenCount,
        outputTokens: usage.candidatesTokenCount === undefined && thoughts === undefined ? undefined : (usage.candidatesTokenCount ?? 0) + (thoughts ?? 0),
        totalTokens: usage.totalTokenCount,
        cachedInputTokens: usage.cachedContentTokenCount,
        reasoningTokens: thoughts,
      });
    }
    const candidate = data.candidates?.[0];
    if (!candidate) {
      const blocked = data.promptFeedback?.blockReason;
      if (blocked) {
        this.reason = 'content-filter';
        this.rawReason = blocked;
      }
      return;
    }
    const parts = candidate.content?.parts;
    if (parts) for (let i = 0; i < parts.length; i++) this.onPart(parts[i]);
    if (candidate.finishReason) {
      this.rawReason = candidate.finishReason;
      this.reason = FINISH_REASONS[candidate.finishReason] ?? 'other';
    }
  }

  end(): void {
    if (this.reason === undefined) {
      this.failTruncated();
      return;
    }
    if (this.streaming) this.completeStreamingCall();
    // Gemini says STOP after function calls; the turn asks for tool results all the same.
    if (this.reason === 'stop' && this.callCount > 0) this.reason = 'tool-calls';
    this.finish();
  }

  private onPart(part: Record<string, any>): void {
    if (typeof part.text === 'string') {
      if (part.text !== '') this.out.push(part.thought ? { type: 'reasoning', delta: part.text } : { type: 'text', delta: part.text });
      return;
    }
    const call = part.functionCall;
    if (!call) return;
    if (call.partialArgs || call.willContinue || this.streaming) {
      this.onStreamedCall(call, part.thoughtSignature);
      return;
    }
    this.emitCall(call.id, call.name, call.args ?? {}, part.thoughtSignature);
  }

  private onStreamedCall(call: Record<string, any>, thoughtSignature: string | undefined): void {
    if (!this.streaming) this.streaming = { args: new JsonPathAssembler() };
    const state = this.streaming;
    if (call.name && !state.name) state.name = call.name;
    if (call.id && !state.id) state.id = call.id;
    if (thoughtSignature && !state.thoughtSignature) state.thoughtSignature = thoughtSignature;
    for (const partial of (call.partialArgs ?? []) as PartialArgument[]) state.args.add(partial);
    if (!call.willContinue) this.completeStreamingCall();
  }

  private completeStreamingCall(): void {
    const state = this.streaming!;
    this.streaming = undefined;
    this.emitCall(state.id, state.name, state.args.take(), state.thoughtSignature);
  }

  private emitCall(providerId: string | undefined, name: string | undefined, args: unknown, thoughtSignature: string | undefined): void {
    const index = this.callCount++;
    const event: LlmToolCallEvent = { type: 'tool-call', id: providerId ?? `call_${index}`, name: name ?? '', arguments: args, rawArguments: JSON.stringify(args) };
    if (providerId || thoughtSignature) {
      const meta: GeminiCallMetadata = {};
      if (providerId) meta.id = providerId;
      if (thoughtSignature) meta.thoughtSignature = thoughtSignature;
      event.providerMetadata = { gemini: meta };
    }
    this.out.push(event);
  }
}
