export {
  RpcToolset,
  RpcToolError,
  DEFAULT_MAX_TOOL_STREAM_ROWS,
  type RpcTool,
  type RpcToolExecutionContext,
  type RpcToolsOptions,
} from './rpc-toolset.js';
export { rpcToolName, RPC_TOOL_NAME_PATTERN } from './rpc-tool-name.js';
