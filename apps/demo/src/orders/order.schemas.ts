import { z } from 'zod';

/**
 * The orders feature is written with zod schemas where the rest of the demo uses class-validator
 * DTOs: one schema validates the params (the handler receives its output) and describes them in
 * OpenRPC, the explorer, MCP and the typed client. docs/schemas.md compares the two styles.
 */

/** A named schema: `.meta({ id })` makes it one shared component of the OpenRPC document. */
export const Address = z
  .object({
    street: z.string().trim().min(1),
    city: z.string().trim().min(1),
    zip: z.string().regex(/^[0-9]{4,6}$/, 'A zip code is 4 to 6 digits'),
  })
  .meta({ id: 'Address' });

export const OrderLine = z.strictObject({
  sku: z.string().regex(/^[A-Z]{3}-[0-9]{3}$/, 'A SKU looks like ABC-123'),
  qty: z.number().int().min(1).max(99),
});

export const PlaceOrder = z.strictObject({
  customer: z.object({ email: z.email(), name: z.string().trim().min(1) }),
  lines: z.array(OrderLine).min(1).max(20),
  shipping: z.discriminatedUnion('method', [z.object({ method: z.literal('pickup') }), z.object({ method: z.literal('delivery'), address: Address })]),
  coupon: z.string().toUpperCase().optional(),
  giftNote: z.string().max(200).nullable().default(null),
});

export const PlacedOrder = z.object({
  orderId: z.string(),
  customer: z.string(),
  items: z.number().int(),
  totalCents: z.number().int(),
  shipping: z.enum(['pickup', 'delivery']),
  giftNote: z.string().nullable(),
});

export const TrackOrder = z.object({
  orderId: z.string().regex(/^ord-[0-9]+$/),
  delayMs: z.number().int().min(0).max(2_000).default(300),
});

export const TrackingEvent = z.object({
  step: z.number().int(),
  status: z.enum(['received', 'packed', 'shipped', 'delivered']),
  at: z.iso.datetime(),
});
