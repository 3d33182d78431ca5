/**
 * A tool the tool loop can run. The shape is deliberately the one `RpcToolset.tools(methods, ctx)`
 * of `@nest-jsonrpc/server` returns (`{ name, method, description, parameters, execute(args) }`),
 * so the app's own RPC methods plug in as they are; any object of this shape works.
 */
import type { JsonSchema } from '../model/request.js';

export interface LlmToolExecutionContext {
  /** Aborted when the loop is aborted: a long tool should stop. */
  signal: AbortSignal;
  /** The id of the call being answered. */
  toolCallId: string;
}

export interface LlmTool {
  /** The name the model calls (providers accept `^[a-zA-Z0-9_-]{1,64}$`). */
  name: string;
  description?: string;
  /** A JSON Schema of the arguments object. */
  parameters: JsonSchema;
  /**
   * Runs the call. Its result goes back to the model as text (strings as they are, anything else
   * as JSON); a throw becomes an error result with the error's message, and the loop goes on.
   */
  execute(args: any, context: LlmToolExecutionContext): unknown;
}
