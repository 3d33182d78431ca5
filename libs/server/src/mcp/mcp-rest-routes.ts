import type { Logger } from '@nestjs/common';
import { RpcErrorCode, type RpcErrorObject } from '@nest-jsonrpc/protocol';
import { requestUser } from '../context/caller-identity.js';
import { singleValue } from '../context/single-value.js';
import type { RpcHttpExchange } from '../context/rpc-context.js';
import type { EarlyRefusal, HttpRouteGroup } from '../http/http-edge.js';
import { NOT_JSON, PARSE_ERROR, parseJsonText } from '../http/json-text.js';
import type { RpcReplyWriter } from '../http/rpc-reply-writer.js';
import { refusalBody } from '../http/transport-errors.js';
import type { ResolvedMcpOptions } from '../options/mcp-options.js';
import type { McpResourceServer } from './auth/mcp-resource-server.js';
import type { McpToolCatalog } from './mcp-tool-catalog.js';
import type { McpToolResult, McpToolRunner } from './mcp-tool-runner.js';
import { chooseToolTextFormat, unknownFormatMessage } from './tool-text.js';

/** A refusal of `POST <path>/call`: its status and the error its text renders (and a Bearer challenge). */
interface RestRefusal {
  readonly status: number;
  readonly code: number;
  readonly message: string;
  readonly wwwAuthenticate?: string;
}

const refusal = (status: number, code: number, message: string): RestRefusal => ({ status, code, message });

const EMPTY_BODY = refusal(400, RpcErrorCode.InvalidRequest, 'Request body is empty');
const NOT_JSON_BODY = refusal(400, PARSE_ERROR.code, PARSE_ERROR.message);
const NOT_AN_OBJECT = refusal(400, RpcErrorCode.InvalidRequest, 'Request must be a JSON object');
const NO_NAME = refusal(400, RpcErrorCode.InvalidRequest, 'Field "name" is required');
const BAD_NAME = refusal(400, RpcErrorCode.InvalidRequest, 'Field "name" must be a non-empty string');
const BAD_ARGUMENTS = refusal(400, RpcErrorCode.InvalidRequest, '"arguments" must be an object or an array');

/**
 * The plain-HTTP REST surface (`mcp.rest: true`) beside the MCP endpoint: `GET <path>/tools`
 * answers `{"tools":[…]}` (the caller's list, as `tools/list`), `POST <path>/call` runs one tool
 * call and answers `{content, structuredContent?, isError?}`. Checks run in a fixed order:
 * the body, then the tool, then the format, so a refused format never runs the tool. Handler
 * errors are 200 with `isError: true` (docs/mcp.md, "The REST surface").
 */
export class McpRestRoutes {
  constructor(
    protected readonly catalog: McpToolCatalog,
    protected readonly runner: McpToolRunner,
    protected readonly writer: RpcReplyWriter,
    protected readonly mcp: ResolvedMcpOptions,
    protected readonly logger: Logger,
    /** The MCP endpoint's DNS-rebinding check, shared. */
    private readonly checkHost: ((exchange: RpcHttpExchange) => EarlyRefusal | undefined) | undefined,
    /** `mcp.auth`: the same credentials check and challenges as the MCP endpoint. */
    protected readonly resourceServer?: McpResourceServer,
  ) {
  }

  routes(): HttpRouteGroup {
    const { path, allowedHosts } = this.mcp;
    return {
      name: 'MCP REST request',
      family: 'tools',
      body: 'json',
      admit: allowedHosts.length ? this.checkHost : undefined,
      routes: [
        { method: 'GET', path: `${path}/tools`, handle: (exchange) => this.handleTools(exchange) },
        { method: 'POST', path: `${path}/call`, handle: (exchange) => this.handleCall(exchange) },
      ],
    };
  }

  protected async handleTools(exchange: RpcHttpExchange): Promise<void> {
    const refused = await this.admit(exchange);
    if (refused) return this.refuse(exchange, refused);
    this.writer.sendJson(exchange, 200, JSON.stringify({ tools: this.catalog.list(exchange.roles) }));
  }

  protected async handleCall(exchange: RpcHttpExchange): Promise<void> {
    const refused = await this.admit(exchange);
    if (refused) return this.refuse(exchange, refused);
    const text = exchange.body;
    if (text === undefined || text.trim() === '') return this.refuse(exchange, EMPTY_BODY);
    const body = parseJsonText(text);
    if (body === NOT_JSON) return this.refuse(exchange, NOT_JSON_BODY);
    if (body === null || typeof body !== 'object' || Array.isArray(body)) return this.refuse(exchange, NOT_AN_OBJECT);
    const { name, arguments: args } = body as { name?: unknown; arguments?: unknown };
    if (name === undefined) return this.refuse(exchange, NO_NAME);
    if (typeof name !== 'string' || name === '') return this.refuse(exchange, BAD_NAME);
    if (args !== undefined && (args === null || typeof args !== 'object')) return this.refuse(exchange, BAD_ARGUMENTS);
    // Unknown, hidden and role-denied tools alike: the caller learns nothing more.
    const entry = this.catalog.find(name, exchange.roles);
    if (!entry) return this.refuse(exchange, refusal(404, RpcErrorCode.MethodNotFound, `Method not found: ${name}`));
    const chosen = chooseToolTextFormat({
      header: singleValue(exchange.headers['x-mcp-format']),
      query: singleValue(exchange.query.format),
      decorator: entry.format,
      fallback: this.mcp.defaultFormat,
    });
    if ('invalid' in chosen) return this.refuse(exchange, refusal(400, RpcErrorCode.InvalidRequest, unknownFormatMessage(chosen.invalid)));
    const authenticated = requestUser(exchange.request) !== undefined;
    const before = this.resourceServer?.challengeBefore(entry.access, exchange.roles, authenticated);
    if (before) return this.refuse(exchange, challengeRefusal(before.status, before.error, before.wwwAuthenticate));
    const { result, denial } = await this.runner.run(entry, args, exchange, { format: chosen.format });
    const after = denial && this.resourceServer?.challengeAfter(denial, entry.access, authenticated);
    if (after) return this.refuse(exchange, challengeRefusal(after.status, after.error, after.wwwAuthenticate));
    this.writer.sendJson(exchange, 200, JSON.stringify(restBody(result)));
  }

  /** `mcp.auth`: the request's bearer credentials, as the MCP endpoint checks them. */
  private async admit(exchange: RpcHttpExchange): Promise<RestRefusal | undefined> {
    const refused = await this.resourceServer?.admit(exchange);
    return refused && challengeRefusal(refused.status, refused.error, 'wwwAuthenticate' in refused ? refused.wwwAuthenticate : undefined);
  }

  private refuse(exchange: RpcHttpExchange, { status, code, message, wwwAuthenticate }: RestRefusal): void {
    if (!wwwAuthenticate) return this.writer.sendJson(exchange, status, refusalBody('tool', { code, message }));
    this.writer.sendBody(exchange, status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'www-authenticate': wwwAuthenticate }, refusalBody('tool', { code, message }));
  }
}

/** The REST body: an error result carries its text only (the bundle's shape); success keeps `structuredContent`. */
function restBody(result: McpToolResult): McpToolResult {
  return result.isError ? { content: result.content, isError: true } : result;
}

function challengeRefusal(status: number, error: RpcErrorObject, wwwAuthenticate: string | undefined): RestRefusal {
  return { status, code: error.code, message: error.message, ...(wwwAuthenticate && { wwwAuthenticate }) };
}

