import type { Logger } from '@nestjs/common';
import type { FastifyError, FastifyInstance, FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify';
import { RpcErrorCode } from '@nest-jsonrpc/protocol';
import { RpcHttpExchange } from '../context/rpc-context.js';
import { RpcRequestTooLargeException } from '../errors/rpc-exceptions.js';
import { bodyBoundsOf, registerJsonRpcBodyParser } from '../http/json-body-parser.js';
import { NOT_JSON, parseJsonText } from '../http/json-text.js';
import { requestIdOf } from '../http/request-id.js';
import type { RpcReplyWriter } from '../http/rpc-reply-writer.js';
import type { ResolvedJsonRpcOptions } from '../options/json-rpc-options.js';
import type { McpToolCatalog } from './mcp-tool-catalog.js';
import type { McpToolResult, McpToolRunner } from './mcp-tool-runner.js';
import { chooseToolTextFormat, renderToolErrorText, unknownFormatMessage } from './tool-text.js';

/** A refusal of `POST <path>/call`: its status and the error its text renders. */
interface RestRefusal {
  readonly status: number;
  readonly code: number;
  readonly message: string;
}

const refusal = (status: number, code: number, message: string): RestRefusal => ({ status, code, message });

const EMPTY_BODY = refusal(400, RpcErrorCode.InvalidRequest, 'Request body is empty');
const PARSE_ERROR = refusal(400, RpcErrorCode.ParseError, 'Parse error');
const NOT_AN_OBJECT = refusal(400, RpcErrorCode.InvalidRequest, 'Request must be a JSON object');
const NO_NAME = refusal(400, RpcErrorCode.InvalidRequest, 'Field "name" is required');
const BAD_NAME = refusal(400, RpcErrorCode.InvalidRequest, 'Field "name" must be a non-empty string');
const BAD_ARGUMENTS = refusal(400, RpcErrorCode.InvalidRequest, '"arguments" must be an object or an array');
const UNSUPPORTED_MEDIA_TYPE = refusal(415, RpcErrorCode.InvalidRequest, 'Content-Type must be application/json');
const INTERNAL = refusal(500, RpcErrorCode.InternalError, 'Internal error');

/**
 * The Symfony bundle's REST surface (`mcp.rest: true`) beside the MCP endpoint: `GET <path>/tools`
 * answers `{"tools":[…]}` (the caller's list, as `tools/list`), `POST <path>/call` runs one tool
 * call and answers `{content, structuredContent?, isError?}`. Checks run in the bundle's order:
 * the body, then the tool, then the format, so a refused format never runs the tool. Handler
 * errors are 200 with `isError: true` (seed 001's `/mcp/call` column).
 */
export class McpRestRoutes {
  constructor(
    protected readonly catalog: McpToolCatalog,
    protected readonly runner: McpToolRunner,
    protected readonly writer: RpcReplyWriter,
    protected readonly options: ResolvedJsonRpcOptions,
    protected readonly logger: Logger,
    /** The MCP endpoint's DNS-rebinding check, shared. */
    private readonly checkHost: (request: FastifyRequest, reply: FastifyReply, done: () => void) => void,
  ) {
    this.handleTools = this.handleTools.bind(this);
    this.handleCall = this.handleCall.bind(this);
  }

  plugin(): FastifyPluginCallback {
    const { path, allowedHosts } = this.options.mcp;
    const bounds = bodyBoundsOf(this.options, this.writer);
    const bodyLimit = bounds.limit;
    return (instance: FastifyInstance, _opts, done) => {
      registerJsonRpcBodyParser(instance, bounds);
      instance.setErrorHandler((error: FastifyError, request, reply) => this.transportError(error, request, reply));
      if (allowedHosts.length) instance.addHook('onRequest', this.checkHost);
      instance.route({ method: 'GET', url: `${path}/tools`, handler: this.handleTools });
      instance.route({ method: 'POST', url: `${path}/call`, bodyLimit, handler: this.handleCall });
      done();
    };
  }

  protected handleTools(request: FastifyRequest, reply: FastifyReply): void {
    const exchange = this.exchangeOf(request, reply);
    this.writer.sendJson(reply, 200, JSON.stringify({ tools: this.catalog.list(exchange.roles) }));
  }

  protected async handleCall(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const text = request.body as string | undefined;
    if (text === undefined || text.trim() === '') return this.refuse(reply, EMPTY_BODY);
    const body = parseJsonText(text);
    if (body === NOT_JSON) return this.refuse(reply, PARSE_ERROR);
    if (body === null || typeof body !== 'object' || Array.isArray(body)) return this.refuse(reply, NOT_AN_OBJECT);
    const { name, arguments: args } = body as { name?: unknown; arguments?: unknown };
    if (name === undefined) return this.refuse(reply, NO_NAME);
    if (typeof name !== 'string' || name === '') return this.refuse(reply, BAD_NAME);
    if (args !== undefined && (args === null || typeof args !== 'object')) return this.refuse(reply, BAD_ARGUMENTS);
    const exchange = this.exchangeOf(request, reply);
    // Unknown, hidden and role-denied tools alike: the caller learns nothing more.
    const entry = this.catalog.find(name, exchange.roles);
    if (!entry) return this.refuse(reply, refusal(404, RpcErrorCode.MethodNotFound, `Method not found: ${name}`));
    const chosen = chooseToolTextFormat({
      header: single(request.headers['x-mcp-format']),
      query: single((request.query as Record<string, unknown> | undefined)?.format),
      decorator: entry.format,
      fallback: this.options.mcp.defaultFormat,
    });
    if ('invalid' in chosen) return this.refuse(reply, refusal(400, RpcErrorCode.InvalidRequest, unknownFormatMessage(chosen.invalid)));
    const result = await this.runner.call(entry, args, exchange, { format: chosen.format });
    this.writer.sendJson(reply, 200, JSON.stringify(restBody(result)));
  }

  protected exchangeOf(request: FastifyRequest, reply: FastifyReply): RpcHttpExchange {
    return new RpcHttpExchange(request, reply, requestIdOf(request), this.options.security.rolesResolver);
  }

  private refuse(reply: FastifyReply, { status, code, message }: RestRefusal): void {
    const text = JSON.stringify({ content: [{ type: 'text', text: renderToolErrorText({ code, message }) }], isError: true });
    // A refusal sent before the body was read (413, 415) lingers so the client reads it.
    this.writer.sendEarlyJson(reply.request, reply, status, text);
  }

  /** What Fastify raises before the handler (too large, wrong media type), in the REST body shape. */
  private transportError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
    switch (error.code) {
      case 'FST_ERR_CTP_BODY_TOO_LARGE': {
        const tooLarge = RpcRequestTooLargeException.forLimit(this.options.maxRequestSize).toErrorObject();
        return this.refuse(reply, refusal(413, tooLarge.code, tooLarge.message));
      }
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      case 'FST_ERR_CTP_INVALID_TYPE':
        return this.refuse(reply, UNSUPPORTED_MEDIA_TYPE);
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
        return this.refuse(reply, EMPTY_BODY);
    }
    if (error.statusCode !== undefined && error.statusCode < 500) return this.refuse(reply, PARSE_ERROR);
    this.logger.error(`MCP REST request failed before dispatch (${request.url}): ${error.message}`, error.stack);
    this.refuse(reply, INTERNAL);
  }
}

/** The REST body: an error result carries its text only (the bundle's shape); success keeps `structuredContent`. */
function restBody(result: McpToolResult): McpToolResult {
  return result.isError ? { content: result.content, isError: true } : result;
}

function single(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
