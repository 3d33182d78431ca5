export { RpcObservability } from './rpc-observability.js';
export { INSTRUMENTATION_SCOPE } from './rpc-call-telemetry.js';
export * from './rpc-events.js';
