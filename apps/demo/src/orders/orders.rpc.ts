import { Injectable } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { RpcCtx, RpcMcp, RpcMethod, RpcParams, RpcStream, type RpcContext, type RpcSchemaOutput } from '@nest-jsonrpc/server';
import { PlacedOrder, PlaceOrder, TrackingEvent, TrackOrder } from './order.schemas.js';

/** Cents per unit, by SKU prefix (a price list would live elsewhere). */
const UNIT_CENTS: Readonly<Record<string, number>> = { BOK: 1_250, PEN: 300, MUG: 900 };
const STATUSES = ['received', 'packed', 'shipped', 'delivered'] as const;

@Injectable()
export class OrdersRpc {
  private placed = 0;

  /** zod validates params (nested objects, an array of lines, a union) and the handler gets its output. */
  @RpcMethod('orders.place', {
    summary: 'Places an order (params validated by a zod schema)',
    description: 'Lines of {sku, qty}; shipping by pickup or delivery to an address; an optional coupon (upper-cased).',
    tags: ['orders'],
    params: PlaceOrder,
    result: PlacedOrder,
  })
  @RpcMcp({ title: 'Place an order' })
  place(order: RpcSchemaOutput<typeof PlaceOrder>): RpcSchemaOutput<typeof PlacedOrder> {
    const totalCents = order.lines.reduce((sum, line) => sum + (UNIT_CENTS[line.sku.slice(0, 3)] ?? 500) * line.qty, 0);
    const discounted = order.coupon === 'WELCOME10' ? Math.round(totalCents * 0.9) : totalCents;
    return {
      orderId: `ord-${++this.placed}`,
      customer: order.customer.name,
      items: order.lines.reduce((n, line) => n + line.qty, 0),
      totalCents: discounted,
      shipping: order.shipping.method,
      giftNote: order.giftNote,
    };
  }

  /** A stream whose rows a zod schema describes (`@RpcStream({ row })`); params through `@RpcParams({ schema })`. */
  @RpcMethod('orders.track', { summary: 'Streams the tracking events of an order', tags: ['orders', 'streams'] })
  @RpcStream({ row: TrackingEvent })
  async *track(@RpcParams({ schema: TrackOrder }) p: RpcSchemaOutput<typeof TrackOrder>, @RpcCtx() ctx: RpcContext): AsyncGenerator<RpcSchemaOutput<typeof TrackingEvent>> {
    for (const [index, status] of STATUSES.entries()) {
      if (index > 0) await sleep(p.delayMs, undefined, { signal: ctx.signal });
      yield { step: index + 1, status, at: new Date().toISOString() };
    }
  }
}
