import { Module } from '@nestjs/common';
import { JsonRpcModule } from '@nest-jsonrpc/server';
import { AccountModule } from './account/account.module.js';
import { BillingRpc } from './billing/billing.rpc.js';
import { LegacyRpc } from './legacy/legacy.rpc.js';
import { MathRpc } from './math/math.rpc.js';
import { UsersRpc } from './users/users.rpc.js';

@Module({
  imports: [JsonRpcModule.forRoot(), AccountModule],
  providers: [MathRpc, UsersRpc, BillingRpc, LegacyRpc],
})
export class AppModule {}
