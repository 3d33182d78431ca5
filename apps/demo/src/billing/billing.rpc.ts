import { Injectable } from '@nestjs/common';
import { RpcException, RpcMethod, RpcParam } from '@nest-jsonrpc/server';

/** A domain error with its own code: passes through to the client with code, message and data. */
export class InsufficientFundsException extends RpcException {
  constructor(balance: number, requested: number) {
    super('Insufficient funds', { code: 1001, data: { balance, requested } });
  }
}

@Injectable()
export class BillingRpc {
  private balance = 100;

  @RpcMethod('billing.withdraw', {
    summary: 'Withdraws from the demo balance (starts at 100)',
    tags: ['billing'],
    result: { type: 'object', properties: { balance: { type: 'number' } }, required: ['balance'], additionalProperties: false },
    errors: [{ code: 1001, message: 'Insufficient funds', data: { balance: 100, requested: 250 } }],
  })
  withdraw(@RpcParam('amount') amount: number) {
    if (amount > this.balance) throw new InsufficientFundsException(this.balance, amount);
    this.balance -= amount;
    return { balance: this.balance };
  }
}
