import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AccountRpc } from './account.rpc.js';
import { BearerTokenGuard } from './bearer-token.guard.js';
import { UserDirectory } from './user-directory.js';

@Module({
  providers: [UserDirectory, AccountRpc, { provide: APP_GUARD, useClass: BearerTokenGuard }],
  exports: [UserDirectory],
})
export class AccountModule {}
