import { Inject, Injectable, type OnApplicationBootstrap, type Provider } from '@nestjs/common';
import type { RpcSerializedResult } from '../caching/serialized-result.js';
import { RpcContext } from '../context/rpc-context.js';
import { RpcCtx } from '../decorators/rpc-params.js';
import { RpcMethod } from '../decorators/rpc-method.js';
import type { ResolvedDurableOptions } from '../options/durable-options.js';
import type { ResolvedJsonRpcOptions } from '../options/json-rpc-options.js';
import type { ResolvedOpenRpcOptions } from '../options/openrpc-options.js';
import { OPTIONS_SECTION } from '../options/option-section-tokens.js';
import { RpcPipeline } from '../pipeline/rpc-pipeline.js';
import type { OpenRpcDocument } from './openrpc-document.js';
import { OpenRpcDocuments } from './openrpc-documents.js';

/** The service discovery method of the OpenRPC specification. */
export const RPC_DISCOVER = 'rpc.discover';

/**
 * `rpc.discover`: a built-in method, registered like the app's own (the registry allows its
 * reserved name for this class only) so it runs through the whole pipeline — batches,
 * notifications, the app's guards and interceptors — and `GET <openrpc.path>` answers by calling
 * it. Takes no params (`{}` and `[]` pass; anything else is -32602, from its param plan). Public:
 * the document it answers lists only what the caller may call.
 */
@Injectable()
export class OpenRpcDiscovery implements OnApplicationBootstrap {
  private documents: OpenRpcDocuments | undefined;
  private noEnhancers: boolean | undefined;

  constructor(
    private readonly pipeline: RpcPipeline,
    @Inject(OPTIONS_SECTION.path) private readonly path: string,
    @Inject(OPTIONS_SECTION.openrpc) private readonly openrpc: ResolvedOpenRpcOptions,
    @Inject(OPTIONS_SECTION.stream) private readonly stream: ResolvedJsonRpcOptions['stream'],
    @Inject(OPTIONS_SECTION.durable) private readonly durable: ResolvedDurableOptions,
  ) {}

  /** Gathers the method facts once every method is registered (the pipeline is initialised in `onModuleInit`). */
  onApplicationBootstrap(): void {
    this.catalog();
  }

  @RpcMethod(RPC_DISCOVER, {
    roles: [],
    rejectUnknown: true,
    discoverable: false,
    summary: 'Returns the OpenRPC document of this API (the methods the caller may call)',
  })
  discover(@RpcCtx() ctx: RpcContext): RpcSerializedResult | OpenRpcDocument {
    const documents = this.catalog();
    const json = documents.forCaller(ctx.roles, documents.serverUrlOf(ctx.request));
    // `/rpc` and the GET route splice the pre-serialised text into the answer — unless the app's
    // interceptors (or pipes, guards, filters) run around the call: they get the document itself,
    // as they get any result. Nest's ClassSerializerInterceptor copied the pre-serialised holder
    // into `{ json: "<text>" }`, which was then answered as the document (the explorer could not
    // load it). A transport that wants a value (an LLM tool, MCP) gets the document itself too.
    return ctx.transport === 'http' && this.spliceable() ? json : (JSON.parse(json.json) as OpenRpcDocument);
  }

  /** Whether no enhancer of the app runs around `rpc.discover`, so its text can be spliced in as it is. */
  private spliceable(): boolean {
    return (this.noEnhancers ??= this.pipeline.registry.get(RPC_DISCOVER)?.hasEnhancers !== true);
  }

  /** The per-caller documents (built on first use when the app never bootstrapped, e.g. in a test module). */
  catalog(): OpenRpcDocuments {
    const { pipeline, path, openrpc, stream, durable } = this;
    return (this.documents ??= new OpenRpcDocuments(pipeline.registry, (method) => pipeline.accessRuleOf(method), { path, openrpc, stream, durable }));
  }
}

/**
 * Registers `OpenRpcDiscovery` only when `openrpc.enabled` (options may come from
 * `forRootAsync`, so the choice is made when they are known): disabled, the provider is `null`,
 * the registry never sees `rpc.discover`, and a call answers -32601 like any unknown method.
 */
export const OPENRPC_DISCOVERY_PROVIDER: Provider = {
  provide: OpenRpcDiscovery,
  inject: [RpcPipeline, OPTIONS_SECTION.path, OPTIONS_SECTION.openrpc, OPTIONS_SECTION.stream, OPTIONS_SECTION.durable],
  useFactory: (pipeline: RpcPipeline, path: string, openrpc: ResolvedOpenRpcOptions, stream: ResolvedJsonRpcOptions['stream'], durable: ResolvedDurableOptions) =>
    openrpc.enabled ? new OpenRpcDiscovery(pipeline, path, openrpc, stream, durable) : null,
};
