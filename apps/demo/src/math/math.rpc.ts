import { Injectable } from '@nestjs/common';
import { RpcMcp, RpcMethod, RpcParam, type RpcContext } from '@nest-jsonrpc/server';
import { AddDto, SumResult } from './math.dto.js';

@Injectable()
export class MathRpc {
  /** Undecorated parameters: `(params, ctx)`, params validated against AddDto. */
  @RpcMethod('math.add', { summary: 'Adds two numbers', tags: ['math'], result: SumResult })
  @RpcMcp({ title: 'Add two numbers', annotations: { readOnlyHint: true, idempotentHint: true } })
  add(p: AddDto, _ctx: RpcContext): { sum: number } {
    return { sum: p.a + p.b };
  }

  /** The JSON-RPC spec's example: positional `[42, 23]` or named `{minuend, subtrahend}`. */
  @RpcMethod('math.subtract', {
    summary: 'Subtracts subtrahend from minuend',
    description: 'Positional `[42, 23]` or named `{"minuend": 42, "subtrahend": 23}`.',
    tags: ['math'],
    result: { type: 'number' },
  })
  subtract(@RpcParam('minuend') minuend: number, @RpcParam('subtrahend') subtrahend: number): number {
    return minuend - subtrahend;
  }
}
