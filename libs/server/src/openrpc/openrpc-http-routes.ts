import type { Logger } from '@nestjs/common';
import { httpStatusForCode, RpcErrorCode, RpcErrorMessage, type RpcErrorObject } from '@nest-jsonrpc/protocol';
import { RpcSerializedResult } from '../caching/serialized-result.js';
import type { RpcHttpExchange } from '../context/rpc-context.js';
import type { HttpRouteGroup } from '../http/http-edge.js';
import type { RpcReplyWriter } from '../http/rpc-reply-writer.js';
import type { ResolvedOpenRpcOptions } from '../options/openrpc-options.js';
import type { RpcPipeline } from '../pipeline/rpc-pipeline.js';
import { RPC_DISCOVER } from './openrpc-discovery.js';

/**
 * `GET <openrpc.path>`: the same document `rpc.discover` answers the same caller — it *is* a
 * `rpc.discover` call through the pipeline (the app's guards decide who is calling, exactly as
 * on `POST <path>`). The body is the document itself; an error (a guard refusing) is an error
 * envelope with the status its code maps to (-32001: 403). `Cache-Control: no-store`: it differs
 * per caller.
 */
export class OpenRpcHttpRoutes {
  constructor(
    private readonly pipeline: RpcPipeline,
    private readonly writer: RpcReplyWriter,
    private readonly openrpc: ResolvedOpenRpcOptions,
    private readonly logger: Logger,
  ) {
  }

  routes(): HttpRouteGroup {
    return { name: 'OpenRPC request', family: 'rpc', body: 'ignored', routes: [{ method: 'GET', path: this.openrpc.path, handle: (exchange) => this.handle(exchange) }] };
  }

  private async handle(exchange: RpcHttpExchange): Promise<void> {
    const call = this.pipeline.callOf(RPC_DISCOVER, undefined, exchange, 'http', { id: null });
    let status = 200;
    let text: string;
    if (!call) {
      status = 404;
      text = this.writer.error(exchange, null, { code: RpcErrorCode.MethodNotFound, message: RpcErrorMessage[RpcErrorCode.MethodNotFound] }, RPC_DISCOVER);
    } else {
      try {
        const value = await this.pipeline.run(call);
        text = value instanceof RpcSerializedResult ? value.json : JSON.stringify(value);
      } catch (error) {
        const rpcError: RpcErrorObject = this.writer.errorOf(error, RPC_DISCOVER);
        // A refused caller of a GET resource is 403, not the 400 a POST envelope maps -32001 to.
        status = rpcError.code === RpcErrorCode.AccessDenied ? 403 : httpStatusForCode(rpcError.code);
        text = this.writer.error(exchange, null, rpcError, RPC_DISCOVER);
      }
    }
    if (exchange.sent) return;
    this.writer.sendJson(exchange, status, text);
  }
}
