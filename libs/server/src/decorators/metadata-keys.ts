/** Reflect-metadata keys. Internal: read only through the registry's metadata accessor. */
export const RPC_METHOD_METADATA = 'nest-jsonrpc:method';
export const RPC_ARGS_METADATA = 'nest-jsonrpc:args';
export const RPC_STREAM_METADATA = 'nest-jsonrpc:stream';
export const RPC_RATE_LIMIT_METADATA = 'nest-jsonrpc:rate-limit';
export const RPC_CACHE_METADATA = 'nest-jsonrpc:cache';
export const RPC_MCP_METADATA = 'nest-jsonrpc:mcp';
