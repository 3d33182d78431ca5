export { RpcObservability } from './rpc-observability.js';
export * from './rpc-events.js';
