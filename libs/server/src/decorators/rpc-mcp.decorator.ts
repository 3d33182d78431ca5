import { RPC_MCP_METADATA } from './metadata-keys.js';

export interface RpcMcpOptions {
  /** Tool name; default: the RPC method name. */
  name?: string;
  /** Tool description; default: the method's `description`. */
  description?: string;
}

/**
 * Marks an `@RpcMethod` to be exposed as a tool by the MCP endpoint. Part of the public API
 * (DESIGN §3) so code can be written against it now; the MCP endpoint itself is a later
 * capability, and until it lands this decorator only records metadata.
 */
export function RpcMcp(options: RpcMcpOptions = {}): MethodDecorator {
  return (_target, _key, descriptor) => {
    Reflect.defineMetadata(RPC_MCP_METADATA, { ...options }, descriptor.value as object);
    return descriptor;
  };
}
