import { RpcErrorCode } from '@nest-jsonrpc/protocol';
import type { RpcHttpExchange } from '../context/rpc-context.js';
import type { HttpRouteGroup } from '../http/http-edge.js';
import type { RpcReplyWriter } from '../http/rpc-reply-writer.js';
import { refusalBody } from '../http/transport-errors.js';
import { PROTECTED_RESOURCE_WELL_KNOWN } from './auth/protected-resource-metadata.js';
import type { McpResourceServer } from './auth/mcp-resource-server.js';

const ALLOWED = 'GET, HEAD, OPTIONS';
/** Anyone may read the metadata: browser-based MCP clients (the Inspector's web UI) fetch it cross-origin. */
const CORS = { 'access-control-allow-origin': '*' };

/**
 * `GET /.well-known/oauth-protected-resource[/<path>]` (`mcp.auth`): the Protected Resource
 * Metadata (RFC 9728 §3.1) at the path-suffixed form of the resource and at the root form,
 * readable cross-origin (with the CORS preflight answered); any other path under the well-known
 * prefix is a JSON 404, so a client probing for another resource learns it is not served here.
 * No DNS-rebinding check: the document is public.
 */
export class McpMetadataRoutes {
  constructor(
    protected readonly resourceServer: McpResourceServer,
    protected readonly writer: RpcReplyWriter,
  ) {
  }

  routes(): HttpRouteGroup {
    return {
      name: 'Protected Resource Metadata request',
      family: 'streams',
      body: 'ignored',
      routes: [
        ...this.resourceServer.metadataPaths.map((path) => ({ method: '*' as const, path, handle: (exchange: RpcHttpExchange) => this.handleMetadata(exchange) })),
        { method: '*', path: `${PROTECTED_RESOURCE_WELL_KNOWN}/*`, handle: (exchange) => this.handleUnknown(exchange) },
      ],
    };
  }

  protected handleMetadata(exchange: RpcHttpExchange): void {
    switch (exchange.method) {
      case 'GET':
      case 'HEAD':
        // For HEAD the platform sends the headers only.
        return this.writer.sendBody(exchange, 200, { 'content-type': 'application/json; charset=utf-8', ...CORS }, this.resourceServer.metadataJson);
      case 'OPTIONS': {
        const asked = exchange.headers['access-control-request-headers'];
        return this.writer.sendBody(exchange, 204, { ...CORS, 'access-control-allow-methods': ALLOWED, ...(typeof asked === 'string' && { 'access-control-allow-headers': asked, vary: 'Access-Control-Request-Headers' }) });
      }
      default:
        this.writer.sendTransportError(exchange, 'streams', 'methodNotAllowed', { allow: ALLOWED });
    }
  }

  protected handleUnknown(exchange: RpcHttpExchange): void {
    // The durable routes' 404 shape and code (-32002), as every JSON refusal of the module's REST paths.
    this.writer.sendJson(exchange, 404, refusalBody('error', { code: RpcErrorCode.NotFound, message: 'No protected resource is described at this path' }));
  }
}
