import { Injectable } from '@nestjs/common';
import { RpcCtx, RpcMethod, RpcParams, type RpcContext } from '@nest-jsonrpc/server';
import { UpdateUserDto } from './user.dto.js';

@Injectable()
export class UsersRpc {
  @RpcMethod('user.update', { description: 'Updates a user; the address is validated as a nested DTO.' })
  update(@RpcParams() dto: UpdateUserDto, @RpcCtx() ctx: RpcContext) {
    return { id: dto.id, email: dto.email, city: dto.address.city, requestId: ctx.requestId };
  }
}
