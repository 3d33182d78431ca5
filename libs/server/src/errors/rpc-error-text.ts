import { RpcErrorCode, RpcErrorMessage, type RpcErrorObject } from '@nest-jsonrpc/protocol';

export interface RpcErrorTextOptions {
  /**
   * Name the code when the message does not already say it: `Error -32001 (Access denied): One of
   * the following roles is required: admin`. For readers that know no code numbers (a model).
   */
  codeName?: boolean;
}

/** What a violation line shows for a violation with no path (it concerns the params as a whole). */
export const WHOLE_PARAMS_PATH = '(params)';

/**
 * An error object as text for a reader that is not a JSON-RPC client — an MCP tool result, an
 * LLM tool result: first line exactly `Error <code>: <message>`; for -32602,
 * one `  - <path>: <message>` line per entry of `error.data` (the `ParamViolation[]` that `/rpc`
 * answers), in order, and nothing else. An entry without a path reads `(params)`; data that is
 * not a list of violations adds no line. Only what the client would be sent anyway: a -32603's
 * cause was logged by the mapper and is not in the object.
 */
export function formatRpcErrorText(error: RpcErrorObject, options: RpcErrorTextOptions = {}): string {
  const name = options.codeName ? RpcErrorMessage[error.code] : undefined;
  const named = name !== undefined && !error.message.toLowerCase().includes(name.toLowerCase()) ? ` (${name})` : '';
  const lines = [`Error ${error.code}${named}: ${error.message}`];
  if (error.code === RpcErrorCode.InvalidParams && Array.isArray(error.data)) {
    for (const entry of error.data as unknown[]) {
      if (typeof entry !== 'object' || entry === null) continue;
      const { path, message } = entry as { path?: unknown; message?: unknown };
      if (typeof message !== 'string') continue;
      lines.push(`  - ${typeof path === 'string' && path !== '' ? path : WHOLE_PARAMS_PATH}: ${message}`);
    }
  }
  return lines.join('\n');
}
