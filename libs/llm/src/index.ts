/**
 * @nest-jsonrpc/llm — provider stream adapters that normalise text and reasoning deltas, complete
 * tool calls, usage and finish reasons (docs/llm.md), a tool loop whose tools can be the app's own
 * RPC methods, and `toStreamRows` for `@RpcStream` handlers. No provider SDK, no Nest required.
 */
export type {
  LlmEvent,
  LlmFinishEvent,
  LlmFinishReason,
  LlmRawEvent,
  LlmReasoningEvent,
  LlmTextEvent,
  LlmToolCallEvent,
  LlmToolLoopEvent,
  LlmToolResultEvent,
  LlmUsage,
} from './model/events.js';
export type {
  JsonSchema,
  LlmAssistantMessage,
  LlmMessage,
  LlmProvider,
  LlmProviderOptions,
  LlmRequest,
  LlmStreamOptions,
  LlmToolCall,
  LlmToolChoice,
  LlmToolDefinition,
  LlmToolMessage,
  LlmUserMessage,
} from './model/request.js';
export { LlmProviderError } from './model/errors.js';
export { ToolCallAccumulator, parseToolArguments, type ToolCallFragment } from './tool-calls/tool-call-accumulator.js';
export { openAiChat, type OpenAiChatOptions } from './providers/openai-chat.js';
export { openAiResponses } from './providers/openai-responses.js';
export { anthropicMessages } from './providers/anthropic-messages.js';
export { geminiGenerateContent } from './providers/gemini-generate-content.js';
export { bedrockConverseStream, type AwsCredentials, type BedrockConverseStreamOptions } from './providers/bedrock-converse-stream.js';
export { runToolLoop, DEFAULT_MAX_TURNS, type RunToolLoopOptions } from './tool-loop/run-tool-loop.js';
export type { LlmTool, LlmToolExecutionContext } from './tool-loop/llm-tool.js';
export {
  toStreamRows,
  type LlmDeltaRow,
  type LlmFinishRow,
  type LlmReasoningRow,
  type LlmStreamRow,
  type LlmToolCallRow,
  type LlmToolResultRow,
  type ToStreamRowsOptions,
} from './stream-rows/to-stream-rows.js';
