import { Controller, Get } from '@nestjs/common';
import { HealthCheck, HealthCheckService } from '@nestjs/terminus';
import { JsonRpcHealthIndicator } from '@nest-jsonrpc/server/terminus';

/**
 * `GET /health`: the stores the API depends on and whether this instance takes traffic. 200 with
 * `status: "ok"` while all are up; 503 with what is down otherwise — including from the moment
 * shutdown begins (`jsonrpc.draining`), so a load balancer stops sending requests before the
 * server closes.
 */
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly jsonRpc: JsonRpcHealthIndicator,
  ) {}

  @Get()
  @HealthCheck()
  check() {
    return this.health.check([() => this.jsonRpc.durableStore(), () => this.jsonRpc.sharedStore(), () => this.jsonRpc.readiness()]);
  }
}
