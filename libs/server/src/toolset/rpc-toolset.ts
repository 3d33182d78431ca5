import { Injectable, Logger } from '@nestjs/common';
import type { RpcErrorObject, RpcParamsValue } from '@nest-jsonrpc/protocol';
import type { RpcContext } from '../context/rpc-context.js';
import { formatRpcErrorText } from '../errors/rpc-error-text.js';
import { RpcExceptionMapper } from '../errors/rpc-exception-mapper.js';
import { RpcInvalidParamsException, RpcMethodNotFoundException } from '../errors/rpc-exceptions.js';
import { methodToolDescription, methodToolParameters, runMethodTool, type MethodToolRows } from '../method-tools/index.js';
import { RpcPipeline } from '../pipeline/rpc-pipeline.js';
import type { RpcMethodDefinition } from '../registry/rpc-method-definition.js';
import { deepFreeze, type JsonSchemaObject } from '../schema/index.js';
import { rpcToolName } from './rpc-tool-name.js';

/** What the tool loop passes to `execute` (`@nest-jsonrpc/llm`'s `LlmToolExecutionContext`). */
export interface RpcToolExecutionContext {
  /** Aborts the call (with the caller's own `ctx.signal`, whichever comes first). */
  signal?: AbortSignal;
  /** Becomes the call's JSON-RPC id (so it is a call, not a notification: the cache applies). */
  toolCallId?: string;
}

/**
 * One of the app's methods as an LLM tool: the shape `runToolLoop` of `@nest-jsonrpc/llm` takes.
 * `execute` resolves with the method's result (a stream method's: `{ rows }`), or rejects with an
 * `RpcToolError` whose message is the text the model should read.
 */
export interface RpcTool {
  /** The method's name made safe for providers (`weather.get` -> `weather_get`). */
  readonly name: string;
  /** The JSON-RPC method it runs. */
  readonly method: string;
  readonly description: string;
  /** The params schema: an object root, standalone (`$defs` for nested DTOs). */
  readonly parameters: JsonSchemaObject;
  execute(args: unknown, context?: RpcToolExecutionContext): Promise<unknown>;
}

export interface RpcToolsOptions {
  /**
   * A stream method's rows are collected into the result `{ rows }`; past this many the producer
   * is stopped and the result is `{ rows, truncated: true }`. Default 1000.
   */
  maxStreamRows?: number;
}

export const DEFAULT_MAX_TOOL_STREAM_ROWS = 1000;

/**
 * A tool call that answered with a JSON-RPC error: `error` is the error object, `message` its text
 * for the model (`formatRpcErrorText` with the code named, so a denial reads `Access denied`).
 */
export class RpcToolError extends Error {
  constructor(
    readonly error: RpcErrorObject,
    message: string,
  ) {
    super(message);
    this.name = 'RpcToolError';
  }
}

/** What a method's tool needs that does not depend on the caller: computed once per method. */
interface ToolShape {
  readonly name: string;
  readonly description: string;
  readonly parameters: JsonSchemaObject;
}

/**
 * The app's own methods as LLM tools (docs/llm.md): `toolset.tools(['weather.get'], ctx)`. Each
 * tool's `execute` runs its method through the whole pipeline (`callOf` + `run`) as `ctx`'s
 * caller — the same HTTP request, user and roles — with `transport: 'tool'`: the app's guards,
 * roles, rate limits (the same counters as `/rpc`), the cache, interceptors and params
 * validation all apply. Any error becomes the tool's error result text; an unexpected exception
 * becomes `Error -32603: Internal error` (its cause is logged by `RpcExceptionMapper`, never shown
 * to the model).
 */
@Injectable()
export class RpcToolset {
  private readonly logger = new Logger('JsonRpc');
  private readonly shapes = new WeakMap<RpcMethodDefinition, ToolShape>();

  /** @internal */
  constructor(
    private readonly pipeline: RpcPipeline,
    private readonly mapper: RpcExceptionMapper,
  ) {}

  /**
   * Tools for `methods`, to be run as `ctx`'s caller. Throws (a programming error, at once) for
   * an unknown method, a durable stream method, params that cannot be an object, or two methods
   * whose tool names collide. Methods the caller lacks roles for are included: calling them
   * answers the denial (so the model learns why).
   */
  tools(methods: readonly string[], ctx: RpcContext, options: RpcToolsOptions = {}): RpcTool[] {
    const maxStreamRows = options.maxStreamRows ?? DEFAULT_MAX_TOOL_STREAM_ROWS;
    if (!Number.isInteger(maxStreamRows) || maxStreamRows < 1) throw new RangeError(`RpcToolset: maxStreamRows must be a positive integer, got ${maxStreamRows}`);
    const registry = this.pipeline.registry;
    const unknown = methods.filter((method) => registry.get(method) === undefined);
    if (unknown.length) throw new Error(`RpcToolset: no such method: ${unknown.map((m) => `"${m}"`).join(', ')}`);

    const byName = new Map<string, RpcTool>();
    for (const method of new Set(methods)) {
      const definition = registry.get(method)!;
      const shape = this.shapeOf(definition);
      const clash = byName.get(shape.name);
      if (clash) throw new Error(`RpcToolset: methods "${clash.method}" and "${method}" both become the tool name "${shape.name}"; give them distinct tools lists`);
      byName.set(shape.name, {
        ...shape,
        method,
        execute: (args, context) => this.execute(definition, args, ctx, context, maxStreamRows),
      });
    }
    return [...byName.values()];
  }

  private shapeOf(definition: RpcMethodDefinition): ToolShape {
    let shape = this.shapes.get(definition);
    if (shape) return shape;
    if (definition.stream?.durable) throw new Error(`RpcToolset: "${definition.name}" is a durable stream method and cannot be a tool (its run outlives the call)`);
    const parameters = methodToolParameters(definition, this.pipeline.registry.components);
    if (!parameters) throw new Error(`RpcToolset: "${definition.name}" cannot be a tool: its params schema is not an object (tools take named arguments)`);
    shape = Object.freeze({
      name: rpcToolName(definition.name),
      description: methodToolDescription(definition),
      parameters: deepFreeze(parameters),
    });
    this.shapes.set(definition, shape);
    return shape;
  }

  private async execute(definition: RpcMethodDefinition, args: unknown, ctx: RpcContext, context: RpcToolExecutionContext | undefined, maxStreamRows: number): Promise<unknown> {
    const method = definition.name;
    const signal = context?.signal ? AbortSignal.any([ctx.signal, context.signal]) : ctx.signal;
    try {
      const call = this.pipeline.callOf(method, paramsOf(args), ctx.exchange, 'tool', { id: context?.toolCallId ?? `tool:${method}`, signal });
      if (!call) throw new RpcMethodNotFoundException();
      return await runMethodTool(this.pipeline, call, this.collectedRows(maxStreamRows, method));
    } catch (error) {
      // An abort is the loop's (or the client's) doing, not the method's failure: nothing to log.
      if (signal.aborted) throw error;
      const object = this.mapper.toErrorObject(error, method);
      throw new RpcToolError(object, formatRpcErrorText(object, { codeName: true }));
    }
  }

  /** A stream method's rows collected into `{ rows }`, up to `maxRows` (then `truncated: true`). */
  private collectedRows(maxRows: number, method: string): MethodToolRows {
    const rows: unknown[] = [];
    return {
      maxRows,
      add: (row) => void rows.push(row),
      value: (truncated) => (truncated ? { rows, truncated: true } : { rows }),
      onStopFailure: (error) => this.logger.error(`Stopping the stream of ${method} (a tool call) failed: ${String(error)}`),
    };
  }
}

/** A model's arguments as params: absent means `{}`; anything but an object is -32602. */
function paramsOf(args: unknown): RpcParamsValue {
  if (args === undefined || args === null) return {};
  if (typeof args === 'object' && !Array.isArray(args)) return args as RpcParamsValue;
  throw new RpcInvalidParamsException('Invalid params', { data: [{ path: null, message: 'the tool arguments must be a JSON object', code: null }] });
}
