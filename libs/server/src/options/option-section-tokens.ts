import type { Provider } from '@nestjs/common';
import { JSON_RPC_MODULE_OPTIONS, type ResolvedJsonRpcOptions } from './json-rpc-options.js';

/**
 * Injection tokens of single resolved sections (and top-level values, such as `path`): a provider
 * injects the ones it reads (`@Inject(OPTIONS_SECTION.security) security:
 * ResolvedJsonRpcOptions['security']`), never the whole resolved options, so what it depends on is
 * visible in its constructor. Listed in the order of `ResolvedJsonRpcOptions` (json-rpc-options.ts).
 */
export const OPTIONS_SECTION = Object.freeze({
  path: Symbol('JsonRpcOptions.path'),
  stream: Symbol('JsonRpcOptions.stream'),
  httpStatus: Symbol('JsonRpcOptions.httpStatus'),
  maxRequestSize: Symbol('JsonRpcOptions.maxRequestSize'),
  maxBatchSize: Symbol('JsonRpcOptions.maxBatchSize'),
  batchConcurrency: Symbol('JsonRpcOptions.batchConcurrency'),
  params: Symbol('JsonRpcOptions.params'),
  validateResults: Symbol('JsonRpcOptions.validateResults'),
  security: Symbol('JsonRpcOptions.security'),
  durable: Symbol('JsonRpcOptions.durable'),
  redis: Symbol('JsonRpcOptions.redis'),
  exceptionMapper: Symbol('JsonRpcOptions.exceptionMapper'),
  mcp: Symbol('JsonRpcOptions.mcp'),
  openrpc: Symbol('JsonRpcOptions.openrpc'),
  explorer: Symbol('JsonRpcOptions.explorer'),
  limits: Symbol('JsonRpcOptions.limits'),
  rateLimit: Symbol('JsonRpcOptions.rateLimit'),
  observability: Symbol('JsonRpcOptions.observability'),
  rateLimitOnStoreError: Symbol('JsonRpcOptions.rateLimitOnStoreError'),
} satisfies { [K in keyof ResolvedJsonRpcOptions]?: symbol });

/** One provider per token, each the section of the module's resolved options (json-rpc.module.ts). */
export const OPTIONS_SECTION_PROVIDERS: Provider[] = Object.entries(OPTIONS_SECTION).map(([name, token]) => ({
  provide: token,
  inject: [JSON_RPC_MODULE_OPTIONS],
  useFactory: (options: ResolvedJsonRpcOptions) => options[name as keyof typeof OPTIONS_SECTION],
}));
