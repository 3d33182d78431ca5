/** What every provider accepts as a tool name (OpenAI, Anthropic, Gemini and Bedrock alike). */
export const RPC_TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * The tool name of a method: every character outside `[a-zA-Z0-9_-]` becomes `_` (`weather.get`
 * -> `weather_get`), since most providers forbid dots. Throws when the result is longer than 64
 * characters rather than cutting it (a cut name would be a guess the model cannot map back).
 */
export function rpcToolName(method: string): string {
  const name = method.replace(/[^a-zA-Z0-9_-]/g, '_');
  if (!RPC_TOOL_NAME_PATTERN.test(name)) {
    throw new Error(`RpcToolset: method "${method}" cannot be a tool: its tool name "${name}" must match ${String(RPC_TOOL_NAME_PATTERN)} (at most 64 characters)`);
  }
  return name;
}
