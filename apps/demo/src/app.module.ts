import { Module } from '@nestjs/common';
import { JsonRpcModule } from '@nest-jsonrpc/server';
import { AccountModule } from './account/account.module.js';
import { AgentModule } from './agent/agent.module.js';
import { BillingRpc } from './billing/billing.rpc.js';
import { ClientPageModule } from './client-page/client-page.module.js';
import { LegacyRpc } from './legacy/legacy.rpc.js';
import { MathRpc } from './math/math.rpc.js';
import { DurableRoutesIdentity } from './reports/durable-routes-identity.js';
import { ReportsRpc } from './reports/reports.rpc.js';
import { StreamingDemoModule } from './streaming/streaming-demo.module.js';
import { UsersRpc } from './users/users.rpc.js';

@Module({
  imports: [
    JsonRpcModule.forRoot({
      stream: { enabled: true },
      durable: { enabled: true },
      // rpc.discover, GET /rpc/openrpc.json and the explorer page at GET /rpc/explorer.
      openrpc: { enabled: true, info: { title: 'nest-jsonrpc demo', version: '0.1.0', description: 'Every example of the README, described.' } },
      explorer: { enabled: true },
      // MCP tools for agents on POST /mcp (the @RpcMcp methods), plus GET /mcp/tools and POST /mcp/call.
      mcp: { enabled: true, rest: true, name: 'nest-jsonrpc-demo', version: '0.1.0' },
    }),
    StreamingDemoModule,
    ClientPageModule,
    AccountModule,
    AgentModule,
  ],
  providers: [MathRpc, UsersRpc, BillingRpc, LegacyRpc, ReportsRpc, DurableRoutesIdentity],
})
export class AppModule {}
