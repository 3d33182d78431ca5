import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { RpcExceptionMapper } from '../errors/rpc-exception-mapper.js';
import { findAppProvider } from '../options/app-providers.js';
import type { ResolvedObservabilityOptions } from '../options/observability-options.js';
import { OPTIONS_SECTION } from '../options/option-section-tokens.js';
import { RpcPipeline } from '../pipeline/rpc-pipeline.js';
import { RpcCallTelemetry } from './rpc-call-telemetry.js';
import type { RpcEventSink } from './rpc-call-reports.js';

/**
 * `observability` at bootstrap: finds what the app has — `@opentelemetry/api` and the
 * `EventEmitter2` of `@nestjs/event-emitter`, both optional peers loaded with `import()` so
 * neither is needed — and hands the pipeline an observer when there is anything to record.
 * With nothing to record (no API, no emitter, `logCalls: 'none'`) the pipeline runs unobserved.
 */
@Injectable()
export class RpcObservability implements OnModuleInit {
  private readonly logger = new Logger('JsonRpc');

  constructor(
    @Inject(OPTIONS_SECTION.observability) private readonly observability: ResolvedObservabilityOptions,
    private readonly pipeline: RpcPipeline,
    private readonly mapper: RpcExceptionMapper,
    private readonly moduleRef: ModuleRef,
  ) {}

  async onModuleInit(): Promise<void> {
    const settings = this.observability;
    const api = settings.tracing || settings.metrics ? await optionalImport(() => import('@opentelemetry/api')) : undefined;
    const events = settings.events ? await this.findEventEmitter() : undefined;
    if (api === undefined && events === undefined && settings.logCalls === 'none') {
      this.pipeline.observeWith(undefined);
      return;
    }
    this.pipeline.observeWith(new RpcCallTelemetry(api, settings, this.mapper, events, this.logger));
  }

  private async findEventEmitter(): Promise<RpcEventSink | undefined> {
    const module = await optionalImport(() => import('@nestjs/event-emitter'));
    if (module === undefined) return undefined;
    return findAppProvider<RpcEventSink>(this.moduleRef, module.EventEmitter2);
  }
}

/** An optional peer dependency, or undefined when the app does not have it. */
async function optionalImport<T>(load: () => Promise<T>): Promise<T | undefined> {
  try {
    return await load();
  } catch {
    return undefined;
  }
}
