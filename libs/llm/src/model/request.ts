/**
 * The one request shape every adapter translates into its provider's own body. A conversation is
 * user / assistant / tool messages; an assistant message carries the tool calls the model made,
 * and each `tool` message answers one of them.
 */
import type { LlmEvent, LlmRawEvent } from './events.js';

/** A JSON Schema object (draft 2020-12 or 7); adapters pass it through, adjusting only what a provider rejects. */
export type JsonSchema = Record<string, unknown>;

/** A tool the model may call: its name, what it does, and a JSON Schema of its arguments. */
export interface LlmToolDefinition {
  name: string;
  description?: string;
  parameters: JsonSchema;
}

/** A tool call the model made, as sent back to it in the next turn. */
export interface LlmToolCall {
  id: string;
  name: string;
  /** The parsed arguments (`{}` when the model's JSON did not parse). */
  arguments: unknown;
  /** Provider data that must round-trip with the call (see `LlmToolCallEvent.providerMetadata`). */
  providerMetadata?: Record<string, unknown>;
}

export interface LlmUserMessage {
  role: 'user';
  content: string;
}

export interface LlmAssistantMessage {
  role: 'assistant';
  /** The text the model wrote (an empty or absent text is never sent as a block). */
  content?: string;
  toolCalls?: LlmToolCall[];
}

export interface LlmToolMessage {
  role: 'tool';
  /** The id of the tool call this answers. */
  toolCallId: string;
  /** The tool's name (Gemini's `functionResponse` carries it). */
  name: string;
  /** The result as text (JSON for structured results). */
  content: string;
  /** True when the tool failed and `content` describes the error. */
  isError?: boolean;
}

export type LlmMessage = LlmUserMessage | LlmAssistantMessage | LlmToolMessage;

/** `auto` (default), `none`, `required` (any tool), or one named tool. */
export type LlmToolChoice = 'auto' | 'none' | 'required' | { name: string };

export interface LlmRequest {
  model: string;
  messages: LlmMessage[];
  system?: string;
  tools?: LlmToolDefinition[];
  toolChoice?: LlmToolChoice;
  maxTokens?: number;
  temperature?: number;
  /**
   * Extra top-level fields merged into the provider's request body as they are (for example
   * `{ reasoning_effort: 'low' }` for OpenAI or `{ thinking: { type: 'enabled', budget_tokens: 1024 } }`
   * for Anthropic). They win over the translated fields.
   */
  providerOptions?: Record<string, unknown>;
}

export interface LlmStreamOptions {
  /** Aborting it aborts the upstream request at once; the iterator then ends with an `AbortError`. */
  signal?: AbortSignal;
  /** Also yield the provider's own events (`{ type: 'raw' }`) before the events they produced. */
  raw?: boolean;
}

/** A provider adapter: one streaming call per `stream()`, pulled by the caller (nothing is read ahead). */
export interface LlmProvider {
  /** The adapter's name (`openai-chat`, `anthropic-messages`, ...), also `LlmProviderError.provider`. */
  readonly name: string;
  stream(request: LlmRequest, options?: LlmStreamOptions & { raw?: false }): AsyncIterable<LlmEvent>;
  stream(request: LlmRequest, options: LlmStreamOptions & { raw: true }): AsyncIterable<LlmEvent | LlmRawEvent>;
  stream(request: LlmRequest, options?: LlmStreamOptions): AsyncIterable<LlmEvent | LlmRawEvent>;
}

/** The options every provider factory takes. */
export interface LlmProviderOptions {
  /** The API key; each factory falls back to its provider's usual environment variable. */
  apiKey?: string;
  /** The API root, for proxies, OpenAI-compatible servers and tests (`http://127.0.0.1:8080/v1`). */
  baseUrl?: string;
  /** Headers added to every request (they win over the adapter's own). */
  headers?: Record<string, string>;
  /** A `fetch` to use instead of the global one. */
  fetch?: typeof fetch;
}
