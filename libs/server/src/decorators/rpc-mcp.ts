import type { McpFormatName } from '../options/mcp-options.js';
import { RPC_MCP_METADATA } from './metadata-keys.js';

/** MCP tool annotations (hints for clients; never a security boundary). */
export interface RpcMcpAnnotations {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/** How a tool's result is rendered as text: `json | pretty_json | markdown | plain | toon` (the names live in options/mcp-options.ts). */
export type RpcMcpFormat = McpFormatName;

export interface RpcMcpOptions {
  /** Tool name; default: the RPC method name. */
  name?: string;
  /** Human-readable title. */
  title?: string;
  /** Tool description; default: the method's `description`. */
  description?: string;
  annotations?: RpcMcpAnnotations;
  /** Text rendering of the result. Default: the module's `mcp.defaultFormat`. */
  format?: RpcMcpFormat;
  /** False hides the method from MCP even under `mcp.exposeAll`. Default true. */
  enabled?: boolean;
  /**
   * Whether a call may run as an MCP task (a durable stream the client polls): `'optional'` —
   * a task for clients that support tasks, a direct call for the others; `'required'` — clients
   * without tasks are refused; `'forbidden'` — never. Default: `'optional'` for a durable
   * `@RpcStream`, `'forbidden'` otherwise. Needs `durable.enabled`.
   */
  task?: RpcMcpTaskSupport;
}

/** `execution.taskSupport` of MCP 2025-11-25, and this module's rule for the Tasks extension. */
export type RpcMcpTaskSupport = 'forbidden' | 'optional' | 'required';

/** Exposes an `@RpcMethod` as a tool on the MCP endpoint (`mcp.enabled`). */
export function RpcMcp(options: RpcMcpOptions = {}): MethodDecorator {
  return (_target, _key, descriptor) => {
    Reflect.defineMetadata(RPC_MCP_METADATA, { ...options }, descriptor.value as object);
    return descriptor;
  };
}
