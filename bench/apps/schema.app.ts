/**
 * Bench app for the `schema` workload: the same 10-field params object taken three ways by three
 * methods of one app — validated by a zod schema, by a class-validator DTO, and not validated at
 * all — so the three rates come from one process under the same conditions.
 */
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { ArrayMaxSize, IsBoolean, IsIn, IsInt, IsNumber, IsOptional, IsString, Length, Max, Min } from 'class-validator';
import { z } from 'zod';
import { JsonRpcModule, RpcMethod, type RpcSchemaOutput } from '@nest-jsonrpc/server';

const CURRENCIES = ['EUR', 'USD', 'GBP'] as const;

const Order = z.object({
  id: z.number().int().min(1),
  sku: z.string().min(3).max(20),
  qty: z.number().int().min(1).max(1000),
  price: z.number().min(0),
  currency: z.enum(CURRENCIES),
  customer: z.string().min(1).max(100),
  express: z.boolean(),
  tags: z.array(z.string()).max(5),
  note: z.string().max(200).optional(),
  priority: z.number().int().min(0).max(9),
});

class OrderDto {
  @IsInt() @Min(1) id!: number;
  @IsString() @Length(3, 20) sku!: string;
  @IsInt() @Min(1) @Max(1000) qty!: number;
  @IsNumber() @Min(0) price!: number;
  @IsIn(CURRENCIES) currency!: (typeof CURRENCIES)[number];
  @IsString() @Length(1, 100) customer!: string;
  @IsBoolean() express!: boolean;
  @IsString({ each: true }) @ArrayMaxSize(5) tags!: string[];
  @IsOptional() @IsString() @Length(0, 200) note?: string;
  @IsInt() @Min(0) @Max(9) priority!: number;
}

type Taken = { qty: number; price: number };
const total = (p: Taken) => ({ total: p.qty * p.price });

@Injectable()
class OrdersBenchRpc {
  @RpcMethod('order.zod', { params: Order })
  zod(p: RpcSchemaOutput<typeof Order>) {
    return total(p);
  }

  @RpcMethod('order.dto')
  dto(p: OrderDto) {
    return total(p);
  }

  @RpcMethod('order.none')
  none(p: Taken) {
    return total(p);
  }
}

@Module({ imports: [JsonRpcModule.forRoot()], providers: [OrdersBenchRpc] })
class SchemaBenchModule {}

const app = await NestFactory.create<NestFastifyApplication>(SchemaBenchModule, new FastifyAdapter(), { logger: false });
await app.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
process.send?.({ port: (app.getHttpServer().address() as { port: number }).port });
