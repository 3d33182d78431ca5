import type { RpcId } from '@nest-jsonrpc/protocol';
import { callerUserId } from '../context/caller-identity.js';
import type { RpcHttpExchange } from '../context/rpc-context.js';
import type { UserIdResolver } from '../options/json-rpc-options.js';

/**
 * One MCP request being served, as `McpInFlightRequests` holds it. Cancelling it aborts the
 * signal of its HTTP exchange — the `ctx.signal` of the call it carries — so the method stops as
 * it does when its client disconnects; `cancelled` tells the route to answer no response.
 */
export class McpInFlightRequest {
  /** A `notifications/cancelled` of its caller named it. */
  cancelled = false;

  constructor(
    private readonly registry: McpInFlightRequests,
    readonly key: string,
    private readonly exchange: RpcHttpExchange,
  ) {}

  /** Aborts the exchange's signal with `reason` (the notification's, as the SDK's own servers do). */
  cancel(reason: string | undefined): void {
    this.cancelled = true;
    this.exchange.abort(reason);
  }

  /** The request ended (answered, failed or cancelled): it can no longer be cancelled. */
  end(): void {
    this.registry.remove(this);
  }
}

/**
 * The MCP requests in flight that `notifications/cancelled` may cancel (the 2025-era cancellation;
 * a 2026-07-28 client closes the request's stream instead, which aborts `ctx.signal` as any
 * disconnect does), by JSON-RPC request id within the caller's scope, so that one client cannot
 * cancel another's call:
 *
 * - the endpoint is stateless and issues no `Mcp-Session-Id`, so there is no session to scope by
 *   (a session id a client made up would prove nothing);
 * - an identified caller (`security.userIdResolver`, else `request.user.id`, `sub`, `username`, as
 *   for durable streams and per-user limits): the user — the same user's clients may cancel each
 *   other's calls;
 * - an anonymous caller: the client address the app's platform reports (`request.ip`, which follows
 *   the app's trust-proxy setting, as the rate limits count it). Request ids alone would let anyone
 *   cancel anyone's call (SDK clients number their requests 0, 1, 2…); the connection cannot scope
 *   it either (the notification comes on another connection while the call holds its own).
 *
 * Two calls in flight with one key (two clients of one user or address, both at id 3) make a
 * notification ambiguous: it then cancels neither, since it cannot tell which one its sender meant.
 *
 * Each registered request costs one key, one small object, and one `Map` set and delete.
 */
export class McpInFlightRequests {
  private readonly requests = new Map<string, McpInFlightRequest | McpInFlightRequest[]>();

  constructor(private readonly userIdResolver: UserIdResolver | undefined) {}

  /** Registers the request `id` served on `exchange`; call `end()` on the answer when it ends. */
  begin(exchange: RpcHttpExchange, id: RpcId): McpInFlightRequest {
    const request = new McpInFlightRequest(this, keyOf(this.scopeOf(exchange), id), exchange);
    const held = this.requests.get(request.key);
    if (held === undefined) this.requests.set(request.key, request);
    else if (Array.isArray(held)) held.push(request);
    else this.requests.set(request.key, [held, request]);
    return request;
  }

  /**
   * Acts on the `notifications/cancelled` messages of `body` (one message or a batch) sent on
   * `exchange`: each cancels the request it names within the sender's scope. An unknown, finished,
   * ambiguous or malformed one does nothing, as a notification must (no answer to give).
   */
  cancelFrom(body: unknown, exchange: RpcHttpExchange): void {
    const messages = Array.isArray(body) ? body : [body];
    let scope: string | undefined;
    for (const message of messages) {
      const { jsonrpc, method, id, params } = (message ?? {}) as { jsonrpc?: unknown; method?: unknown; id?: unknown; params?: { requestId?: unknown; reason?: unknown } };
      if (jsonrpc !== '2.0' || method !== 'notifications/cancelled' || id !== undefined || params === null || typeof params !== 'object') continue;
      const { requestId, reason } = params;
      if (!(typeof requestId === 'string' || Number.isSafeInteger(requestId))) continue;
      const held = this.requests.get(keyOf((scope ??= this.scopeOf(exchange)), requestId as RpcId));
      if (held !== undefined && !Array.isArray(held)) held.cancel(typeof reason === 'string' ? reason : undefined);
    }
  }

  /** How many requests are registered (a test's leak check). */
  get size(): number {
    let size = 0;
    for (const held of this.requests.values()) size += Array.isArray(held) ? held.length : 1;
    return size;
  }

  /** @internal `McpInFlightRequest.end` */
  remove(request: McpInFlightRequest): void {
    const held = this.requests.get(request.key);
    if (held === request) {
      this.requests.delete(request.key);
    } else if (Array.isArray(held)) {
      const rest = held.filter((other) => other !== request);
      if (rest.length === 1) this.requests.set(request.key, rest[0]);
      else this.requests.set(request.key, rest);
    }
  }

  /** Who may cancel the requests of this exchange's caller: the user, else the client address. */
  private scopeOf(exchange: RpcHttpExchange): string {
    const user = callerUserId(exchange.request, this.userIdResolver);
    if (user !== undefined) return `user:${user}`;
    const ip = (exchange.request as { ip?: unknown }).ip ?? exchange.raw.socket?.remoteAddress;
    return `ip:${String(ip)}`;
  }
}

/** The scope, length-prefixed so that no id can run into it, then the id's type and value (`1` is not `"1"`). */
function keyOf(scope: string, id: RpcId): string {
  return `${scope.length}:${scope}${typeof id === 'number' ? 'n' : 's'}${String(id)}`;
}
