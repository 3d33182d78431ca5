import { Injectable } from '@nestjs/common';
import { RpcMethod, RpcParam } from '@nest-jsonrpc/server';

@Injectable()
export class LegacyRpc {
  @RpcMethod('legacy.echo', { deprecated: 'use echo instead', summary: 'Echoes the message (deprecated)', tags: ['echo'], result: { type: 'string' } })
  legacyEcho(@RpcParam('message') message: string) {
    return message;
  }

  @RpcMethod('echo', { summary: 'Echoes the message', tags: ['echo'], result: { type: 'string' } })
  echo(@RpcParam('message') message: string) {
    return message;
  }
}
