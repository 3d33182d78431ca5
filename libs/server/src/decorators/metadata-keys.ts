/** Reflect-metadata keys. Internal: read only through the registry's metadata accessor. */
export const RPC_METHOD_METADATA = 'nest-jsonrpc:method';
export const RPC_ARGS_METADATA = 'nest-jsonrpc:args';
