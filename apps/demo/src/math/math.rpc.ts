import { Injectable } from '@nestjs/common';
import { RpcMcp, RpcMethod, RpcParam, type RpcContext } from '@nest-jsonrpc/server';
import { AddDto } from './math.dto.js';

@Injectable()
export class MathRpc {
  /** Undecorated parameters: `(params, ctx)`, params validated against AddDto. */
  @RpcMethod('math.add', { description: 'Adds two numbers.' })
  @RpcMcp({ title: 'Add two numbers', annotations: { readOnlyHint: true, idempotentHint: true } })
  add(p: AddDto, _ctx: RpcContext): { sum: number } {
    return { sum: p.a + p.b };
  }

  /** The JSON-RPC spec's example: positional `[42, 23]` or named `{minuend, subtrahend}`. */
  @RpcMethod('math.subtract')
  subtract(@RpcParam('minuend') minuend: number, @RpcParam('subtrahend') subtrahend: number): number {
    return minuend - subtrahend;
  }
}
