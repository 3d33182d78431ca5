/** Small pieces every provider factory uses. */
import type { LlmRawEvent, LlmEvent } from '../model/events.js';
import type { LlmMessage, LlmProvider, LlmProviderOptions, LlmRequest, LlmStreamOptions } from '../model/request.js';

/** An environment variable, when there is an environment (not in browsers). */
export function envVar(name: string): string | undefined {
  const value = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.[name];
  return value === '' ? undefined : value;
}

export function withoutTrailingSlash(url: string): string {
  return url.endsWith('/') ? url.slice(0, -1) : url;
}

export function resolveFetch(options: LlmProviderOptions): typeof fetch {
  const chosen = options.fetch ?? globalThis.fetch;
  if (!chosen) throw new Error('No fetch available: pass { fetch } to the provider factory');
  return chosen;
}

/** The translated body with the caller's `providerOptions` merged over it. */
export function withProviderOptions(body: Record<string, unknown>, request: LlmRequest): string {
  return JSON.stringify(request.providerOptions ? { ...body, ...request.providerOptions } : body);
}

/** Builds the provider object from its streaming function (the overloads are type-level only). */
export function defineProvider(
  name: string,
  stream: (request: LlmRequest, options: LlmStreamOptions) => AsyncIterable<LlmEvent | LlmRawEvent>,
): LlmProvider {
  return { name, stream: (request: LlmRequest, options: LlmStreamOptions = {}) => stream(request, options) } as LlmProvider;
}

/** The first string among the candidates (error bodies name their type in different fields). */
export function firstString(...values: unknown[]): string | undefined {
  for (const value of values) if (typeof value === 'string' && value !== '') return value;
  return undefined;
}

/** One content block of an API whose turns carry blocks (Anthropic Messages, Bedrock Converse). */
export type ContentBlock = Record<string, unknown>;

export interface BlockTurn {
  role: 'user' | 'assistant';
  content: ContentBlock[];
}

/**
 * Messages as block turns, for the APIs that want them: tool results travel in a user turn, and
 * consecutive blocks of one role (parallel tool results) share one turn; a message with no block
 * (empty text) is dropped, because those APIs reject empty text blocks.
 */
export function toBlockTurns(messages: LlmMessage[], blocksOf: (message: LlmMessage) => ContentBlock[]): BlockTurn[] {
  const turns: BlockTurn[] = [];
  for (const message of messages) {
    const blocks = blocksOf(message);
    if (!blocks.length) continue;
    const role = message.role === 'assistant' ? 'assistant' : 'user';
    const last = turns.at(-1);
    if (last && last.role === role) last.content.push(...blocks);
    else turns.push({ role, content: blocks });
  }
  return turns;
}
