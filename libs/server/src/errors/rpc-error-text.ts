import { RpcErrorMessage, type RpcErrorObject } from '@nest-jsonrpc/protocol';

export interface RpcErrorTextOptions {
  /**
   * Name the code when the message does not already say it: `Error -32001 (Access denied): One of
   * the following roles is required: admin`. For readers that know no code numbers (a model).
   */
  codeName?: boolean;
}

/**
 * An error object as text for a reader that is not a JSON-RPC client — an MCP tool result, an LLM
 * tool result: `Error <code>: <message>`, then one `  - <path>: <message>` line per violation of
 * a -32602 (`  - <message>` when the violation concerns no one key). Only what the client would
 * be sent anyway: a -32603's cause was logged by the mapper and is not in the object.
 */
export function formatRpcErrorText(error: RpcErrorObject, options: RpcErrorTextOptions = {}): string {
  const name = options.codeName ? RpcErrorMessage[error.code] : undefined;
  const named = name !== undefined && !error.message.toLowerCase().includes(name.toLowerCase()) ? ` (${name})` : '';
  let text = `Error ${error.code}${named}: ${error.message}`;
  if (Array.isArray(error.data)) {
    for (const item of error.data as unknown[]) {
      const violation = item as { path?: unknown; message?: unknown } | null;
      if (violation === null || typeof violation !== 'object' || typeof violation.message !== 'string') continue;
      text += typeof violation.path === 'string' && violation.path ? `\n  - ${violation.path}: ${violation.message}` : `\n  - ${violation.message}`;
    }
  }
  return text;
}
