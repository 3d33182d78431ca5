export { progress, RpcProgress } from './progress.js';
export { DurableStreamRunner } from './durable-stream-runner.js';
export { DurableStreamAccess, type DurableCaller, type DurableAccess } from './durable-stream-access.js';
export { DurableHttpRoutes } from './durable-http-routes.js';
export { DurableRpcContext } from './durable-rpc-context.js';
