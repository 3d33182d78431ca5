/**
 * The model behind the demo's `chat.stream`: a real provider when its credentials are in the
 * environment, else the offline model the demo starts itself (so `npm start` works with no key
 * and no network). `LLM_PROVIDER` picks one explicitly: `openai`, `openai-responses`, `anthropic`,
 * `gemini`, `bedrock` or `offline`; `LLM_MODEL` overrides the model name; `LLM_BASE_URL` points the
 * provider elsewhere (a proxy, or an OpenAI-compatible server such as Ollama with `LLM_PROVIDER=openai`).
 */
import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import {
  anthropicMessages,
  bedrockConverseStream,
  geminiGenerateContent,
  openAiChat,
  openAiResponses,
  type LlmEvent,
  type LlmProvider,
  type LlmRequest,
} from '@nest-jsonrpc/llm';
import { startOfflineChatProvider, type OfflineChatProvider } from './offline-chat-provider.js';

export type ChatProviderName = 'openai' | 'openai-responses' | 'anthropic' | 'gemini' | 'bedrock' | 'offline';

/** The default model of each provider (override with LLM_MODEL). */
export const DEFAULT_MODELS: Record<ChatProviderName, string> = {
  openai: 'gpt-4o-mini',
  'openai-responses': 'gpt-4o-mini',
  anthropic: 'claude-3-5-haiku-latest',
  gemini: 'gemini-2.5-flash',
  bedrock: 'amazon.nova-micro-v1:0',
  offline: 'offline-demo',
};

/** LLM_PROVIDER when set; else the first provider whose credentials are present; else offline. */
export function chooseChatProvider(env: NodeJS.ProcessEnv): ChatProviderName {
  const asked = env.LLM_PROVIDER?.trim();
  if (asked) {
    if (!(asked in DEFAULT_MODELS)) throw new Error(`LLM_PROVIDER must be one of ${Object.keys(DEFAULT_MODELS).join(', ')}; got "${asked}"`);
    return asked as ChatProviderName;
  }
  if (env.OPENAI_API_KEY) return 'openai';
  if (env.ANTHROPIC_API_KEY) return 'anthropic';
  if (env.GEMINI_API_KEY) return 'gemini';
  if (env.AWS_BEARER_TOKEN_BEDROCK || (env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY)) return 'bedrock';
  return 'offline';
}

const SYSTEM = 'You are the nest-jsonrpc demo assistant. Answer briefly.';

@Injectable()
export class ChatModel implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('ChatModel');
  readonly providerName = chooseChatProvider(process.env);
  readonly model = process.env.LLM_MODEL?.trim() || DEFAULT_MODELS[this.providerName];
  /** The adapter chosen at startup (set in onModuleInit); `agent.ask` runs its tool loop on it. */
  provider!: LlmProvider;
  private offline: OfflineChatProvider | undefined;

  private readonly baseUrl = process.env.LLM_BASE_URL?.trim() || undefined;

  async onModuleInit(): Promise<void> {
    const baseUrl = this.baseUrl;
    switch (this.providerName) {
      case 'openai':
        this.provider = openAiChat({ baseUrl });
        break;
      case 'openai-responses':
        this.provider = openAiResponses({ baseUrl });
        break;
      case 'anthropic':
        this.provider = anthropicMessages({ baseUrl });
        break;
      case 'gemini':
        this.provider = geminiGenerateContent({ baseUrl });
        break;
      case 'bedrock':
        this.provider = bedrockConverseStream({ baseUrl, region: process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? 'us-east-1' });
        break;
      case 'offline':
        this.offline = await startOfflineChatProvider();
        this.provider = openAiChat({ baseUrl: this.offline.baseUrl });
        break;
    }
    this.logger.log(`chat.stream and agent.ask answer with ${this.providerName} (${this.model}${baseUrl ? ` at ${baseUrl}` : ''})`);
  }

  async onModuleDestroy(): Promise<void> {
    await this.offline?.close();
  }

  /** One answer to `prompt`, as the adapter's events. `delayMs` paces the offline model only. */
  stream(prompt: string, options: { delayMs?: number; signal?: AbortSignal }): AsyncIterable<LlmEvent> {
    return this.provider.stream(this.requestFor(prompt, options), { signal: options.signal });
  }

  /** The first request of a conversation about `prompt` (the model, the system prompt, the offline pacing). */
  requestFor(prompt: string, options: { delayMs?: number; system?: string } = {}): LlmRequest {
    const request: LlmRequest = { model: this.model, system: options.system ?? SYSTEM, messages: [{ role: 'user', content: prompt }] };
    if (this.offline && options.delayMs !== undefined) request.providerOptions = { demo_token_delay_ms: options.delayMs };
    return request;
  }
}
