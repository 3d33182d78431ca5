import type { Logger } from '@nestjs/common';
import type { FastifyInstance, FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify';
import { httpStatusForCode, RpcErrorCode, RpcErrorMessage, type RpcErrorObject } from '@nest-jsonrpc/protocol';
import { RpcSerializedResult } from '../caching/serialized-result.js';
import { RpcHttpExchange } from '../context/rpc-context.js';
import { requestIdOf } from '../http/request-id.js';
import type { RpcReplyWriter } from '../http/rpc-reply-writer.js';
import type { ResolvedJsonRpcOptions } from '../options/json-rpc-options.js';
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
    protected readonly pipeline: RpcPipeline,
    protected readonly writer: RpcReplyWriter,
    protected readonly options: ResolvedJsonRpcOptions,
    protected readonly logger: Logger,
  ) {
    this.handle = this.handle.bind(this);
  }

  plugin(): FastifyPluginCallback {
    return (instance: FastifyInstance, _opts, done) => {
      instance.route({ method: 'GET', url: this.options.openrpc.path, handler: this.handle });
      done();
    };
  }

  protected async handle(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const exchange = new RpcHttpExchange(request, reply, requestIdOf(request), this.options.security.rolesResolver);
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
    if (reply.sent) return;
    reply.headers(this.writer.answerHeaders(exchange));
    this.writer.sendJson(reply, status, text);
  }
}
