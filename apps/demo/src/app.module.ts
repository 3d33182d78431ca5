import { Module, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { JsonRpcModule } from '@nest-jsonrpc/server';
import { AccountModule } from './account/account.module.js';
import { AgentModule } from './agent/agent.module.js';
import { BillingRpc } from './billing/billing.rpc.js';
import { ClientPageModule } from './client-page/client-page.module.js';
import { HealthModule } from './health/health.module.js';
import { LegacyRpc } from './legacy/legacy.rpc.js';
import { MathRpc } from './math/math.rpc.js';
import { demoMcpAuth } from './mcp-auth.js';
import { OrdersRpc } from './orders/orders.rpc.js';
import { DurableRoutesIdentity } from './reports/durable-routes-identity.js';
import { ReportsRpc } from './reports/reports.rpc.js';
import { StreamingDemoModule } from './streaming/streaming-demo.module.js';
import { UsersRpc } from './users/users.rpc.js';

@Module({
  imports: [
    // forRootAsync: the MCP OAuth settings come from the environment, read when the app starts.
    JsonRpcModule.forRootAsync({
      useFactory: () => ({
        stream: { enabled: true },
        durable: { enabled: true },
        // rpc.discover, GET /rpc/openrpc.json and the explorer page at GET /rpc/explorer.
        openrpc: { enabled: true, info: { title: 'nest-jsonrpc demo', version: '0.1.0', description: 'Every example of the README, described.' } },
        explorer: { enabled: true },
        // MCP tools for agents on POST /mcp (the @RpcMcp methods), plus GET /mcp/tools and POST /mcp/call;
        // with MCP_OAUTH_ISSUER set, an OAuth 2.1 resource server (apps/demo/src/mcp-auth.ts).
        mcp: { enabled: true, rest: true, name: 'nest-jsonrpc-demo', version: '0.1.0', auth: demoMcpAuth() },
      }),
    }),
    StreamingDemoModule,
    ClientPageModule,
    AccountModule,
    AgentModule,
    // GET /health: the durable store, the shared Redis (none here) and readiness (@nestjs/terminus).
    HealthModule,
  ],
  providers: [MathRpc, UsersRpc, OrdersRpc, BillingRpc, LegacyRpc, ReportsRpc],
})
export class AppModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    // Every request; it identifies the callers of the durable REST/SSE and MCP routes.
    consumer.apply(DurableRoutesIdentity).forRoutes('{*path}');
  }
}
