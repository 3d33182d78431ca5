import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { JsonRpcHealthModule } from '@nest-jsonrpc/server/terminus';
import { HealthController } from './health.controller.js';

/**
 * `GET /health` (HealthController). On SIGTERM, Terminus keeps the app serving for
 * `SHUTDOWN_DRAIN_MS` (default 0) while `/health` already answers 503: the time a load balancer
 * needs to see the instance leave (Kubernetes: a readiness probe period or two) before the server
 * stops accepting connections.
 */
@Module({
  imports: [TerminusModule.forRoot({ gracefulShutdownTimeoutMs: Number(process.env.SHUTDOWN_DRAIN_MS ?? 0) }), JsonRpcHealthModule],
  controllers: [HealthController],
})
export class HealthModule {}
