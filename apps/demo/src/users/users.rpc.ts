import { Injectable } from '@nestjs/common';
import { RpcCtx, RpcMethod, RpcParams, type RpcContext } from '@nest-jsonrpc/server';
import { UpdatedUserResult, UpdateUserDto } from './user.dto.js';

@Injectable()
export class UsersRpc {
  @RpcMethod('user.update', {
    summary: 'Updates a user',
    description: 'The address is validated as a nested DTO.',
    tags: ['users'],
    result: UpdatedUserResult,
  })
  update(@RpcParams() dto: UpdateUserDto, @RpcCtx() ctx: RpcContext) {
    return { id: dto.id, email: dto.email, city: dto.address.city, requestId: ctx.requestId };
  }
}
