import type { Logger } from '@nestjs/common';
import type { FastifyInstance, FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify';
import { RpcErrorCode, type RpcErrorObject } from '@nest-jsonrpc/protocol';
import { RpcHttpExchange } from '../context/rpc-context.js';
import type { ResolvedJsonRpcOptions } from '../options/json-rpc-options.js';
import type { DurableCallStarter } from '../pipeline/durable-call-starter.js';
import type { RpcPipeline } from '../pipeline/rpc-pipeline.js';
import { bodyBoundsOf, registerJsonRpcBodyParser } from './json-body-parser.js';
import { NOT_JSON, parseJsonText } from './json-text.js';
import { requestIdOf } from './request-id.js';
import { RpcBatchDispatcher, type RpcItemAnswer } from './rpc-batch-dispatcher.js';
import type { RpcReplyWriter } from './rpc-reply-writer.js';
import { methodNotAllowed, transportErrorHandler } from './transport-errors.js';

export const PARSE_ERROR: RpcErrorObject = Object.freeze({ code: RpcErrorCode.ParseError, message: 'Parse error' });

/**
 * The Fastify side of `POST <path>`: an encapsulated plugin with its own body parser and error
 * handler, so nothing about the host app's parsers or error format leaks into JSON-RPC answers.
 * Small protected methods, so a subclass can change one step.
 */
export class RpcHttpRoutes {
  protected readonly dispatcher: RpcBatchDispatcher;
  private readonly mapStatus: boolean;

  constructor(
    pipeline: RpcPipeline,
    protected readonly writer: RpcReplyWriter,
    protected readonly options: ResolvedJsonRpcOptions,
    protected readonly logger: Logger,
    durable: DurableCallStarter | undefined,
  ) {
    this.dispatcher = new RpcBatchDispatcher(pipeline, writer, options, durable);
    this.mapStatus = options.httpStatus.enabled;
    this.handle = this.handle.bind(this);
  }

  plugin(): FastifyPluginCallback {
    const { options, writer, logger } = this;
    const bounds = bodyBoundsOf(options, writer);
    return (instance: FastifyInstance, _opts, done) => {
      registerJsonRpcBodyParser(instance, bounds);
      instance.setErrorHandler(transportErrorHandler(options.maxRequestSize, writer, logger, 'Request'));
      instance.route({ method: 'POST', url: options.path, bodyLimit: bounds.limit, handler: this.handle });
      instance.route({ method: ['GET', 'PUT', 'PATCH', 'DELETE'], url: options.path, handler: methodNotAllowed(writer, 'POST', 'use POST') });
      done();
    };
  }

  protected handle(request: FastifyRequest, reply: FastifyReply): Promise<void> | undefined {
    const exchange = this.exchangeOf(request, reply);
    const body = parseJsonText(request.body as string | undefined);
    const answer = body === NOT_JSON ? this.writer.error(exchange, null, PARSE_ERROR) : this.dispatcher.dispatch(body, exchange);
    if (typeof answer === 'object') return answer.then((text) => this.send(reply, exchange, text));
    this.send(reply, exchange, answer);
    return undefined;
  }

  protected exchangeOf(request: FastifyRequest, reply: FastifyReply): RpcHttpExchange {
    return new RpcHttpExchange(request, reply, requestIdOf(request), this.options.security.rolesResolver);
  }

  /** 200 (or the mapped status with `httpStatus.enabled`); 204 when every item was a notification. */
  protected send(reply: FastifyReply, exchange: RpcHttpExchange, text: RpcItemAnswer): void {
    this.writer.send(reply, exchange, this.mapStatus ? exchange.status : 200, text);
  }
}
