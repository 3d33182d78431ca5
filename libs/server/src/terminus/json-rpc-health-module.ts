import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { JsonRpcHealthIndicator } from './json-rpc-health-indicator.js';

/**
 * Provides `JsonRpcHealthIndicator` to the module that imports it. That module imports
 * `TerminusModule` (or `TerminusModule.forRoot({ gracefulShutdownTimeoutMs })`) itself for
 * `HealthCheckService`; `JsonRpcModule.forRoot()` is imported by the app as usual (it is global).
 */
@Module({
  imports: [TerminusModule],
  providers: [JsonRpcHealthIndicator],
  exports: [JsonRpcHealthIndicator],
})
export class JsonRpcHealthModule {}
