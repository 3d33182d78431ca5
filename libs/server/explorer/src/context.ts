import { JsonRpcClient } from '@nest-jsonrpc/client';
import type { ExplorerDocument, ExplorerMethod } from './openrpc-view.js';

/** The headers to send, as `Headers` for requests and as typed pairs for requests written as code. */
export interface RequestHeaders {
  headers: Headers;
  pairs: Array<[string, string]>;
}

/** One entry of the batch being composed. */
export interface BatchEntry {
  method: string;
  params: unknown;
  notification: boolean;
}

/** What every view of the page shares: the document, the endpoints, the headers, the batch. */
export interface ExplorerContext {
  readonly doc: ExplorerDocument;
  /** Absolute URL of the JSON-RPC endpoint (`servers[0]`'s path on this origin). */
  readonly rpcUrl: string;
  /** Absolute URL of the durable streams' REST base, when a listed method is durable. */
  readonly streamsUrl: string | undefined;
  /** The headers to send, or undefined when a line is malformed (the headers panel opens and says which). */
  requestHeaders(): RequestHeaders | undefined;
  readonly batch: BatchEntry[];
  /** The batch changed (the top bar shows its size). */
  batchChanged(): void;
  /** A call of the sign-in method answered `token`: send it from now on. */
  signIn(method: ExplorerMethod, token: string, params: unknown): void;
}

/** A client for this page's endpoints (streams on `streamPath` when given). */
export function clientFor(ctx: ExplorerContext, streamPath?: string): JsonRpcClient {
  const origin = new URL(ctx.rpcUrl).origin;
  return new JsonRpcClient({
    url: ctx.rpcUrl,
    streamUrl: streamPath ? new URL(streamPath, origin).href : undefined,
    streamsUrl: ctx.streamsUrl,
  });
}
