/**
 * Amazon Bedrock ConverseStream (`POST {baseUrl}/model/{modelId}/converse-stream`): a binary AWS
 * event stream of `messageStart`, `contentBlockStart` (a tool use), `contentBlockDelta` (text,
 * reasoning, tool input fragments), `contentBlockStop`, `messageStop` (stop reason) and `metadata`
 * (usage, after the stop); exception frames become `LlmProviderError`. Requests are signed with
 * SigV4 for service `bedrock` (`@smithy/signature-v4`), or carry a Bedrock API key as a bearer token.
 */
import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';
import type { LlmFinishReason } from '../model/events.js';
import type { LlmMessage, LlmProvider, LlmProviderOptions, LlmRequest, LlmToolChoice } from '../model/request.js';
import { ToolCallAccumulator } from '../tool-calls/tool-call-accumulator.js';
import { AwsEventStreamDecoder, type AwsEventFrame, type AwsEventTurnParser } from '../transport/aws-event-stream-decoder.js';
import { genericErrorDescription, runProviderStream } from '../transport/provider-stream.js';
import { compactUsage, TurnParser } from '../transport/turn-parser.js';
import { ANTHROPIC_FINISH_REASONS } from './anthropic-messages.js';
import { defineProvider, envVar, firstString, resolveFetch, toBlockTurns, withoutTrailingSlash, withProviderOptions, type ContentBlock } from './shared.js';

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface BedrockConverseStreamOptions extends LlmProviderOptions {
  /** Defaults to `AWS_REGION`, then `AWS_DEFAULT_REGION`. */
  region?: string;
  /**
   * Static credentials or a function resolving them per request (for rotating credentials).
   * Defaults to `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY` / `AWS_SESSION_TOKEN`.
   */
  credentials?: AwsCredentials | (() => Promise<AwsCredentials>);
}

/**
 * `apiKey` (default `AWS_BEARER_TOKEN_BEDROCK`) is a Bedrock API key sent as a bearer token;
 * without one the request is SigV4-signed with `credentials` (or the standard AWS variables).
 */
export function bedrockConverseStream(options: BedrockConverseStreamOptions = {}): LlmProvider {
  const name = 'bedrock-converse-stream';
  const region = options.region ?? envVar('AWS_REGION') ?? envVar('AWS_DEFAULT_REGION');
  if (!region) throw new Error('bedrockConverseStream needs a region: pass { region } or set AWS_REGION');
  const baseUrl = withoutTrailingSlash(options.baseUrl ?? `https://bedrock-runtime.${region}.amazonaws.com`);
  const doFetch = resolveFetch(options);
  return defineProvider(name, (request, streamOptions) => {
    const parser = new BedrockParser(name, streamOptions.raw === true);
    return (async function* () {
      const url = `${baseUrl}/model/${encodeURIComponent(request.model)}/converse-stream`;
      const body = withProviderOptions(toBedrockBody(request), request);
      const headers = await bedrockHeaders(url, body, region, options);
      yield* runProviderStream(
        { provider: name, url, headers, body, fetch: doFetch, describeError: describeBedrockError },
        streamOptions.signal,
        parser,
        new AwsEventStreamDecoder(parser),
      );
    })();
  });
}

/** The headers of one request: the bearer key, or a SigV4 signature over exactly the headers sent. */
async function bedrockHeaders(url: string, body: string, region: string, options: BedrockConverseStreamOptions): Promise<Record<string, string>> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/vnd.amazon.eventstream', ...options.headers };
  const apiKey = options.apiKey ?? envVar('AWS_BEARER_TOKEN_BEDROCK');
  if (apiKey) return { ...headers, authorization: `Bearer ${apiKey}` };
  const credentials = await resolveCredentials(options.credentials);
  const target = new URL(url);
  const signer = new SignatureV4({ credentials, region, service: 'bedrock', sha256: Hash.bind(null, 'sha256') });
  const signed = await signer.sign({
    method: 'POST',
    protocol: target.protocol,
    hostname: target.hostname,
    port: target.port ? Number(target.port) : undefined,
    path: target.pathname,
    query: {},
    // URL.host keeps a non-default port, exactly as the Host header fetch sends.
    headers: { ...headers, host: target.host },
    body,
  });
  const sent: Record<string, string> = {};
  // fetch sets Host itself (from the URL, port included); every other signed header is sent as signed.
  for (const [key, value] of Object.entries(signed.headers)) if (key.toLowerCase() !== 'host') sent[key] = value;
  return sent;
}

async function resolveCredentials(credentials: BedrockConverseStreamOptions['credentials']): Promise<AwsCredentials> {
  if (typeof credentials === 'function') return credentials();
  if (credentials) return credentials;
  const accessKeyId = envVar('AWS_ACCESS_KEY_ID');
  const secretAccessKey = envVar('AWS_SECRET_ACCESS_KEY');
  if (!accessKeyId || !secretAccessKey) {
    throw new Error('bedrockConverseStream needs credentials: pass { credentials }, set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or a Bedrock API key');
  }
  const sessionToken = envVar('AWS_SESSION_TOKEN');
  return sessionToken ? { accessKeyId, secretAccessKey, sessionToken } : { accessKeyId, secretAccessKey };
}

export function toBedrockBody(request: LlmRequest): Record<string, unknown> {
  const body: Record<string, unknown> = { messages: toBlockTurns(request.messages, bedrockBlocks) };
  if (request.system) body.system = [{ text: request.system }];
  const hasToolHistory = request.messages.some((m) => m.role === 'tool' || (m.role === 'assistant' && m.toolCalls?.length));
  if (request.tools?.length) {
    const toolConfig: Record<string, unknown> = {
      tools: request.tools.map((tool) => ({
        toolSpec: { name: tool.name, ...(tool.description ? { description: tool.description } : {}), inputSchema: { json: tool.parameters } },
      })),
    };
    const choice = bedrockToolChoice(request.toolChoice);
    if (choice) toolConfig.toolChoice = choice;
    // Converse has no "none": with `none` the tools are only described when the history needs them.
    if (request.toolChoice !== 'none' || hasToolHistory) body.toolConfig = toolConfig;
  }
  const inferenceConfig: Record<string, unknown> = {};
  if (request.maxTokens !== undefined) inferenceConfig.maxTokens = request.maxTokens;
  if (request.temperature !== undefined) inferenceConfig.temperature = request.temperature;
  if (Object.keys(inferenceConfig).length) body.inferenceConfig = inferenceConfig;
  return body;
}

/** Bedrock Converse's blocks for one message (same turn rules as Anthropic: `toBlockTurns`). */
function bedrockBlocks(message: LlmMessage): ContentBlock[] {
  if (message.role === 'user') return message.content ? [{ text: message.content }] : [];
  if (message.role === 'tool') {
    return [{ toolResult: { toolUseId: message.toolCallId, content: [{ text: message.content }], status: message.isError ? 'error' : 'success' } }];
  }
  const blocks: ContentBlock[] = message.content ? [{ text: message.content }] : [];
  for (const call of message.toolCalls ?? []) blocks.push({ toolUse: { toolUseId: call.id, name: call.name, input: call.arguments ?? {} } });
  return blocks;
}

function bedrockToolChoice(choice: LlmToolChoice | undefined): Record<string, unknown> | undefined {
  if (choice === undefined || choice === 'none') return undefined;
  if (choice === 'auto') return { auto: {} };
  if (choice === 'required') return { any: {} };
  return { tool: { name: choice.name } };
}

const FINISH_REASONS: Record<string, LlmFinishReason> = {
  ...ANTHROPIC_FINISH_REASONS,
  guardrail_intervened: 'content-filter',
  content_filtered: 'content-filter',
};

/** Bedrock error answers: `{ message }` with the type in the `x-amzn-errortype` header (`ValidationException:http://...`). */
export function describeBedrockError(status: number, body: unknown, headers: Headers): { type: string; message: string } {
  const type = headers.get('x-amzn-errortype')?.split(':')[0];
  const message = firstString((body as Record<string, unknown> | undefined)?.message, (body as Record<string, unknown> | undefined)?.Message);
  if (type || message) return { type: type ?? `http_${status}`, message: message ?? `HTTP ${status}` };
  return genericErrorDescription(status, body);
}

class BedrockParser extends TurnParser implements AwsEventTurnParser {
  private readonly toolCalls = new ToolCallAccumulator();

  onFrame(frame: AwsEventFrame): void {
    const messageType = frame.headers[':message-type'];
    if (messageType === 'exception') {
      const body = this.parseJson(frame.payload);
      if (body === undefined) return;
      this.emitRaw(frame.headers[':exception-type'], body);
      const status = typeof body.originalStatusCode === 'number' ? body.originalStatusCode : undefined;
      this.fail(status, frame.headers[':exception-type'] ?? 'exception', firstString(body.message, body.Message) ?? 'The provider reported an error', body);
      return;
    }
    if (messageType === 'error') {
      this.fail(undefined, frame.headers[':error-code'] ?? 'error', frame.headers[':error-message'] ?? 'The provider reported an error', frame.headers);
      return;
    }
    const type = frame.headers[':event-type'];
    const data = this.parseJson(frame.payload);
    if (data === undefined) return;
    this.emitRaw(type, data);
    switch (type) {
      case 'contentBlockDelta': {
        const delta = data.delta ?? {};
        if (typeof delta.text === 'string') {
          if (delta.text !== '') this.out.push({ type: 'text', delta: delta.text });
        } else if (delta.reasoningContent) {
          if (delta.reasoningContent.text) this.out.push({ type: 'reasoning', delta: delta.reasoningContent.text });
        } else if (delta.toolUse && this.toolCalls.has(data.contentBlockIndex)) {
          this.toolCalls.add({ index: data.contentBlockIndex, arguments: delta.toolUse.input });
        }
        return;
      }
      case 'contentBlockStart': {
        const toolUse = data.start?.toolUse;
        if (toolUse) this.toolCalls.add({ index: data.contentBlockIndex, id: toolUse.toolUseId, name: toolUse.name });
        return;
      }
      case 'contentBlockStop': {
        const call = this.toolCalls.completeIndex(data.contentBlockIndex);
        if (call) this.out.push(call);
        return;
      }
      case 'messageStop':
        this.rawReason = data.stopReason;
        this.reason = FINISH_REASONS[data.stopReason] ?? 'other';
        if (this.toolCalls.size) this.out.push(...this.toolCalls.complete());
        return;
      case 'metadata': {
        const usage = data.usage;
        if (usage) {
          const cached = usage.cacheReadInputTokens;
          const input = typeof usage.inputTokens === 'number' ? usage.inputTokens + (cached ?? 0) + (usage.cacheWriteInputTokens ?? 0) : undefined;
          this.usage = compactUsage({ inputTokens: input, outputTokens: usage.outputTokens, totalTokens: usage.totalTokens, cachedInputTokens: cached });
        }
        return;
      }
      default:
        return;
    }
  }

  /** The usage (`metadata`) follows `messageStop`, so the turn finishes with the body. */
  end(): void {
    if (this.reason === undefined) {
      this.failTruncated();
      return;
    }
    if (this.toolCalls.size) this.out.push(...this.toolCalls.complete());
    this.finish();
  }
}
