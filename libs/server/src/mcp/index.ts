import type { Logger } from '@nestjs/common';
import type { FastifyInstance } from 'fastify';
import type { RpcExceptionMapper } from '../errors/rpc-exception-mapper.js';
import type { RpcReplyWriter } from '../http/rpc-reply-writer.js';
import type { ResolvedJsonRpcOptions } from '../options/json-rpc-options.js';
import type { DurableCallStarter } from '../pipeline/durable-call-starter.js';
import type { RpcPipeline } from '../pipeline/rpc-pipeline.js';
import type { RpcMethodRegistry } from '../registry/rpc-method-registry.js';
import { McpHttpRoutes } from './mcp-http-routes.js';
import { McpRestRoutes } from './mcp-rest-routes.js';
import { McpToolCatalog } from './mcp-tool-catalog.js';
import { McpToolRunner } from './mcp-tool-runner.js';

export { McpHttpRoutes } from './mcp-http-routes.js';
export { McpRestRoutes } from './mcp-rest-routes.js';
export { McpToolCatalog, isExposedAsTool, type McpToolDescription, type McpToolEntry } from './mcp-tool-catalog.js';
export { McpToolRunner, type McpToolResult } from './mcp-tool-runner.js';

export interface McpMountContext {
  readonly registry: RpcMethodRegistry;
  readonly pipeline: RpcPipeline;
  readonly mapper: RpcExceptionMapper;
  readonly writer: RpcReplyWriter;
  readonly options: ResolvedJsonRpcOptions;
  readonly logger: Logger;
  readonly durable: DurableCallStarter | undefined;
}

/** Builds the tool catalog once (startup fails on a bad tool name) and mounts `POST <mcp.path>`. */
export function mountMcpRoutes(fastify: FastifyInstance, c: McpMountContext): McpToolCatalog {
  const catalog = McpToolCatalog.build(c.registry, c.options.mcp, (method) => c.pipeline.accessRuleOf(method));
  const runner = new McpToolRunner(c.pipeline, c.mapper, c.durable);
  const routes = new McpHttpRoutes(catalog, runner, c.writer, c.options, c.logger);
  void fastify.register(routes.plugin());
  if (c.options.mcp.rest) void fastify.register(new McpRestRoutes(catalog, runner, c.writer, c.options, c.logger, routes.checkHost).plugin());
  const rest = c.options.mcp.rest ? ` (REST: GET ${c.options.mcp.path}/tools, POST ${c.options.mcp.path}/call)` : '';
  c.logger.log(`MCP on POST ${c.options.mcp.path}: ${catalog.size} tool(s)${rest}`);
  return catalog;
}
