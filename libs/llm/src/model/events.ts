/**
 * The normalised event model every provider adapter yields (docs/llm.md). One turn of a model is a
 * sequence of `text` / `reasoning` deltas and complete `tool-call`s, closed by exactly one
 * `finish`, which is always last and carries the usage even when the provider reports it after
 * its stop signal.
 */

/** Why a turn ended, the same vocabulary for every provider; `rawReason` keeps the provider's own word. */
export type LlmFinishReason = 'stop' | 'length' | 'tool-calls' | 'content-filter' | 'error' | 'other';

/**
 * Token counts of one turn. `inputTokens` counts every prompt token, cached or not (as OpenAI
 * reports it; Anthropic's and Bedrock's separate cache counters are added in), and
 * `outputTokens` includes reasoning tokens (as OpenAI reports it; Gemini's `thoughtsTokenCount`
 * is added in). A field is absent when the provider did not report it.
 */
export interface LlmUsage {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  cachedInputTokens?: number;
  reasoningTokens?: number;
}

/** A piece of the answer's text, as it arrives. */
export interface LlmTextEvent {
  type: 'text';
  delta: string;
}

/** A piece of the model's visible reasoning (Anthropic thinking, OpenAI reasoning summaries, Gemini thoughts, ...). */
export interface LlmReasoningEvent {
  type: 'reasoning';
  delta: string;
}

/**
 * A complete tool call: yielded once its arguments have fully arrived, JSON-parsed once.
 * `rawArguments` is the streamed fragments joined (an empty string means `{}`); when they are not
 * valid JSON, `arguments` is absent and `error` says why, so one bad call never breaks the stream.
 */
export interface LlmToolCallEvent {
  type: 'tool-call';
  id: string;
  name: string;
  arguments?: unknown;
  rawArguments: string;
  error?: string;
  /** Opaque provider data that must travel back with the call (Gemini's `thoughtSignature`). */
  providerMetadata?: Record<string, unknown>;
}

/** The end of one turn: always exactly one, always last. */
export interface LlmFinishEvent {
  type: 'finish';
  reason: LlmFinishReason;
  rawReason?: string;
  usage?: LlmUsage;
  /** Why the turn ended when the reason alone does not say (the tool loop's `maxTurns`). */
  message?: string;
}

/** A provider's own event, added before the normalised events it produced when `{ raw: true }` is passed. */
export interface LlmRawEvent {
  type: 'raw';
  provider: string;
  /** The SSE event name or the AWS event type, when the wire has one. */
  name?: string;
  data: unknown;
}

export type LlmEvent = LlmTextEvent | LlmReasoningEvent | LlmToolCallEvent | LlmFinishEvent;

/** What `runToolLoop` adds: the outcome of one executed tool call. */
export interface LlmToolResultEvent {
  type: 'tool-result';
  id: string;
  name: string;
  /** What the tool returned (absent when it failed). */
  result?: unknown;
  /** The text the model received for a failed call. */
  error?: string;
  isError: boolean;
}

export type LlmToolLoopEvent = LlmEvent | LlmToolResultEvent;
