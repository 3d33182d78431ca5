import type { Logger } from '@nestjs/common';
import type { RpcHttpExchange } from '../context/rpc-context.js';
import type { ResolvedJsonRpcOptions } from '../options/json-rpc-options.js';
import type { DurableCallStarter } from '../pipeline/durable-call-starter.js';
import type { RpcPipeline } from '../pipeline/rpc-pipeline.js';
import { methodNotAllowed, type HttpRouteGroup } from './http-edge.js';
import { NOT_JSON, PARSE_ERROR, parseJsonText } from './json-text.js';
import { RpcBatchDispatcher, type BatchDispatchOptions, type RpcItemAnswer } from './rpc-batch-dispatcher.js';
import type { RpcReplyWriter } from './rpc-reply-writer.js';

/** What `POST <path>` reads of the resolved options: its route, whether errors map to HTTP statuses, and what its dispatcher reads. */
export type RpcHttpRouteOptions = Pick<ResolvedJsonRpcOptions, 'path' | 'httpStatus'> & BatchDispatchOptions;

/**
 * `POST <path>`: a JSON-RPC request or batch in, the answer out. The platform adapter reads the
 * body (its own parser, so nothing about the host app's parsers or error format leaks into
 * JSON-RPC answers) and refuses what cannot be read with the catalogue's envelopes.
 */
export class RpcHttpRoutes {
  private readonly dispatcher: RpcBatchDispatcher;
  private readonly mapStatus: boolean;

  constructor(
    pipeline: RpcPipeline,
    private readonly writer: RpcReplyWriter,
    private readonly options: RpcHttpRouteOptions,
    private readonly logger: Logger,
    durable: DurableCallStarter | undefined,
  ) {
    this.dispatcher = new RpcBatchDispatcher(pipeline, writer, options, durable);
    this.mapStatus = options.httpStatus.enabled;
  }

  routes(): HttpRouteGroup {
    const path = this.options.path;
    return {
      name: 'Request',
      family: 'rpc',
      body: 'json',
      routes: [
        { method: 'POST', path, handle: (exchange) => this.handle(exchange) },
        methodNotAllowed(this.writer, 'rpc', ['GET', 'PUT', 'PATCH', 'DELETE'], path, { allow: 'POST', hint: 'use POST' }),
      ],
    };
  }

  private handle(exchange: RpcHttpExchange): Promise<void> | undefined {
    const body = parseJsonText(exchange.body);
    const answer = body === NOT_JSON ? this.writer.error(exchange, null, PARSE_ERROR) : this.dispatcher.dispatch(body, exchange);
    if (typeof answer === 'object') return answer.then((text) => this.send(exchange, text));
    this.send(exchange, answer);
    return undefined;
  }

  /** 200 (or the mapped status with `httpStatus.enabled`); 204 when every item was a notification. */
  private send(exchange: RpcHttpExchange, text: RpcItemAnswer): void {
    this.writer.send(exchange, this.mapStatus ? exchange.status : 200, text);
  }
}
