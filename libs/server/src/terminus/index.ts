/**
 * `@nest-jsonrpc/server/terminus`: health indicators for `@nestjs/terminus` (an optional peer
 * dependency, needed only by apps that import this entry).
 */
export { JsonRpcHealthIndicator } from './json-rpc-health-indicator.js';
export { JsonRpcHealthModule } from './json-rpc-health-module.js';
