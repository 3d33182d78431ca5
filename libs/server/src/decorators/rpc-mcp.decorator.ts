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
}

/** Exposes an `@RpcMethod` as a tool on the MCP endpoint (`mcp.enabled`). */
export function RpcMcp(options: RpcMcpOptions = {}): MethodDecorator {
  return (_target, _key, descriptor) => {
    Reflect.defineMetadata(RPC_MCP_METADATA, { ...options }, descriptor.value as object);
    return descriptor;
  };
}
