import type { OutgoingHttpHeaders } from 'node:http';
import { JSON_RPC_REQUEST_MEDIA_TYPES, RpcErrorCode, serializeError, type RpcErrorObject } from '@nest-jsonrpc/protocol';
import { formatRpcErrorText } from '../errors/rpc-error-text.js';
import { RpcRequestTooLargeException } from '../errors/rpc-exceptions.js';
import { INFLATED_CODINGS } from './request-body.js';

/**
 * The route families, by the body shape of their refusals: `rpc` — `POST <path>`,
 * `<stream.path>`, `POST <mcp.path>`, answered with a JSON-RPC error envelope; `streams` — the
 * durable REST routes, `{"error":{code,message}}`; `tools` — the MCP REST surface, a tool result
 * `{"content":[{"type":"text","text":"Error <code>: <message>"}],"isError":true}`.
 */
export type RouteFamily = 'rpc' | 'streams' | 'tools';

/** What can go wrong before a route serves a request: the body, the verb, the caller's host. */
export type TransportErrorKind =
  /** The body is over `maxRequestSize` (declared, or counted while reading). */
  | 'tooLarge'
  /** A body whose media type the route does not read. */
  | 'unsupportedMediaType'
  /** A body in a content coding the module does not inflate (`Accept-Encoding` says which it does). */
  | 'unsupportedContentEncoding'
  /** A body that could not be read (broken framing, a length that does not match). */
  | 'unreadableBody'
  /** A compressed body that could not be inflated (not the coding it says, cut short, damaged). */
  | 'undecodableBody'
  /** A body that did not arrive within `limits.bodyTimeoutMs`. */
  | 'bodyTimeout'
  /** A verb the route does not serve (`Allow` says which do). */
  | 'methodNotAllowed'
  /** `Host`/`Origin` outside `mcp.allowedHosts` (DNS-rebinding protection). */
  | 'hostRefused'
  /** Anything else that failed before the route ran (logged). */
  | 'internal';

/** How a refusal's body is written. */
export type RefusalShape = 'envelope' | 'error' | 'tool';

/** What a refusal needs beyond its kind: the 405's hint, the host check's message. */
export interface TransportErrorDetail {
  /** 405: the verbs the route serves (`Allow`), and for envelopes the hint after "Invalid Request: ". */
  readonly allow?: string;
  readonly hint?: string;
  /** 403: what the host check said. */
  readonly message?: string;
}

interface CatalogueCell {
  readonly status: number;
  readonly shape: RefusalShape;
  readonly code: number;
  readonly message: (limits: RefusalLimits, detail: TransportErrorDetail) => string;
}

interface RefusalLimits {
  readonly maxRequestSize: number;
  readonly bodyTimeoutMs: number;
}

const cell = (status: number, shape: RefusalShape, code: number, message: CatalogueCell['message'] | string): CatalogueCell => ({
  status,
  shape,
  code,
  message: typeof message === 'string' ? () => message : message,
});

const tooLarge = (l: RefusalLimits) => RpcRequestTooLargeException.forLimit(l.maxRequestSize).message;
const late = (l: RefusalLimits) => `Invalid Request: the body did not arrive within ${l.bodyTimeoutMs} ms`;
const refusedHost = (_l: RefusalLimits, d: TransportErrorDetail) => d.message ?? 'Forbidden';
/** An `Allow` list as words: `GET` -> `GET`, `GET, DELETE` -> `GET or DELETE`, `GET, HEAD, OPTIONS` -> `GET, HEAD or OPTIONS`. */
function oneOf(allow: string | undefined): string {
  const verbs = (allow ?? '').split(', ');
  return verbs.length < 2 ? verbs.join('') : `${verbs.slice(0, -1).join(', ')} or ${verbs[verbs.length - 1]}`;
}
const JSON_ONLY = `Content-Type must be ${JSON_RPC_REQUEST_MEDIA_TYPES[0]}`;
const CODINGS_ONLY = `Content-Encoding must be ${INFLATED_CODINGS.replace(/, (?=[^,]*$)/, ' or ')} (or none)`;
const NOT_INFLATED = 'Parse error: the request body could not be inflated as its Content-Encoding says';
const { InvalidRequest, ParseError, InternalError, InvalidParams } = RpcErrorCode;
/** What the SDK's own DNS-rebinding guards answer (a JSON-RPC error with no id). */
const HOST_REFUSED_CODE = -32000;

/**
 * THE catalogue: for each kind of transport error and each route family, the status and the body.
 * The 413 and the 408 are the same envelope on the `rpc` and `streams` routes (docs/limits.md);
 * the MCP REST surface answers its own tool-result shape for what its clients parse (413, 415,
 * 400, 500).
 */
const CATALOGUE: { readonly [K in TransportErrorKind]: { readonly [F in RouteFamily]: CatalogueCell } } = {
  tooLarge: {
    rpc: cell(413, 'envelope', InvalidRequest, tooLarge),
    streams: cell(413, 'envelope', InvalidRequest, tooLarge),
    tools: cell(413, 'tool', InvalidRequest, tooLarge),
  },
  unsupportedMediaType: {
    rpc: cell(415, 'envelope', InvalidRequest, `Invalid Request: ${JSON_ONLY}`),
    streams: cell(400, 'error', InvalidParams, 'Bad request'),
    tools: cell(415, 'tool', InvalidRequest, JSON_ONLY),
  },
  // RFC 9110, 15.5.16: a content coding the server does not support is a 415, like a media type,
  // with `Accept-Encoding` (12.5.3) saying which it does. The durable routes read no body.
  unsupportedContentEncoding: {
    rpc: cell(415, 'envelope', InvalidRequest, `Invalid Request: ${CODINGS_ONLY}`),
    streams: cell(415, 'error', InvalidRequest, CODINGS_ONLY),
    tools: cell(415, 'tool', InvalidRequest, CODINGS_ONLY),
  },
  unreadableBody: {
    rpc: cell(400, 'envelope', ParseError, 'Parse error: the request body could not be read'),
    streams: cell(400, 'error', InvalidParams, 'Bad request'),
    tools: cell(400, 'tool', ParseError, 'Parse error'),
  },
  // A body that is not what its coding says is one that could not be read: 400 and -32700, as
  // `unreadableBody` (not the 200 of JSON that does not parse, since no JSON was reached).
  undecodableBody: {
    rpc: cell(400, 'envelope', ParseError, NOT_INFLATED),
    streams: cell(400, 'error', InvalidParams, 'Bad request'),
    tools: cell(400, 'tool', ParseError, NOT_INFLATED),
  },
  bodyTimeout: {
    rpc: cell(408, 'envelope', InvalidRequest, late),
    streams: cell(408, 'envelope', InvalidRequest, late),
    tools: cell(408, 'envelope', InvalidRequest, late),
  },
  methodNotAllowed: {
    rpc: cell(405, 'envelope', InvalidRequest, (_l, d) => `Invalid Request: ${d.hint ?? `use ${d.allow}`}`),
    streams: cell(405, 'error', InvalidRequest, (_l, d) => `Method not allowed: use ${oneOf(d.allow)}`),
    tools: cell(405, 'tool', InvalidRequest, (_l, d) => `Method not allowed: use ${oneOf(d.allow)}`),
  },
  hostRefused: {
    rpc: cell(403, 'envelope', HOST_REFUSED_CODE, refusedHost),
    streams: cell(403, 'envelope', HOST_REFUSED_CODE, refusedHost),
    tools: cell(403, 'envelope', HOST_REFUSED_CODE, refusedHost),
  },
  internal: {
    rpc: cell(500, 'envelope', InternalError, 'Internal error'),
    streams: cell(500, 'error', InternalError, 'Internal error'),
    tools: cell(500, 'tool', InternalError, 'Internal error'),
  },
};

/** A refusal ready to send: its status, its body's shape and text, and whether it closes the connection. */
export interface TransportRefusal {
  readonly status: number;
  readonly shape: RefusalShape;
  readonly text: string;
  /** Headers the refusal itself needs (a 415's `Accept-Encoding`). */
  readonly headers?: OutgoingHttpHeaders;
  /**
   * Sent with `Connection: close` even when the whole body has been read: the refusals the body
   * reader raises. Fastify closes the connection after every error of a body parser, so Express
   * does too for the same refusals, and a 413 always closes (README.md, "HTTP").
   */
  readonly closes: boolean;
}

/** The refusals a body reader raises (see {@link TransportRefusal.closes}). */
const CLOSING: ReadonlySet<TransportErrorKind> = new Set<TransportErrorKind>(['tooLarge', 'unsupportedContentEncoding', 'undecodableBody']);
const ACCEPT_ENCODING: OutgoingHttpHeaders = Object.freeze({ 'accept-encoding': INFLATED_CODINGS });

/** The body of `error` in `shape`. */
export function refusalBody(shape: RefusalShape, error: RpcErrorObject): string {
  switch (shape) {
    case 'envelope':
      return serializeError(null, error);
    case 'error':
      return JSON.stringify({ error: { code: error.code, message: error.message } });
    case 'tool':
      return JSON.stringify({ content: [{ type: 'text', text: formatRpcErrorText(error) }], isError: true });
  }
}

/** The catalogue for one app's limits (the 413's size and the 408's delay are in their messages). */
export class TransportErrors {
  private readonly limits: RefusalLimits;

  constructor(limits: RefusalLimits) {
    this.limits = Object.freeze({ maxRequestSize: limits.maxRequestSize, bodyTimeoutMs: limits.bodyTimeoutMs });
  }

  refusal(family: RouteFamily, kind: TransportErrorKind, detail: TransportErrorDetail = {}): TransportRefusal {
    const { status, shape, code, message } = CATALOGUE[kind][family];
    const text = refusalBody(shape, { code, message: message(this.limits, detail) });
    return { status, shape, text, closes: CLOSING.has(kind), ...(kind === 'unsupportedContentEncoding' && { headers: ACCEPT_ENCODING }) };
  }

  /** The 413's error object (the same on every route). */
  tooLargeError(): RpcErrorObject {
    return { code: InvalidRequest, message: tooLarge(this.limits) };
  }
}
