import { Injectable } from '@nestjs/common';
import { RpcMethod, RpcParam } from '@nest-jsonrpc/server';

@Injectable()
export class LegacyRpc {
  @RpcMethod('legacy.echo', { deprecated: 'use echo instead' })
  legacyEcho(@RpcParam('message') message: string) {
    return message;
  }

  @RpcMethod('echo')
  echo(@RpcParam('message') message: string) {
    return message;
  }
}
