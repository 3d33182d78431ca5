import { Module } from '@nestjs/common';
import { JsonRpcModule } from '@nest-jsonrpc/server';
import { BillingRpc } from './billing/billing.rpc.js';
import { LegacyRpc } from './legacy/legacy.rpc.js';
import { MathRpc } from './math/math.rpc.js';
import { ReportsRpc } from './reports/reports.rpc.js';
import { UsersRpc } from './users/users.rpc.js';

@Module({
  imports: [JsonRpcModule.forRoot({ durable: { enabled: true } })],
  providers: [MathRpc, UsersRpc, BillingRpc, LegacyRpc, ReportsRpc],
})
export class AppModule {}
