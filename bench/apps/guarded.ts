/**
 * Bench app for the `guarded` workload: one method behind a roles check, a rate limit too high to
 * trip and a result cache (every measured call is a hit). Identity comes from an `x-roles` header
 * through `security.rolesResolver`, as a gateway-authenticated deployment would do it.
 */
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { JsonRpcModule, RpcCache, RpcMethod, RpcRateLimit } from '@nest-jsonrpc/server';
import { quote } from './guarded-method.js';

@Injectable()
class CatalogRpc {
  @RpcMethod('catalog.quote', { roles: ['reader'] })
  @RpcRateLimit({ limit: 1_000_000_000, interval: 60, scope: 'ip' })
  @RpcCache({ ttl: 3600 })
  quote(params: { sku: string; qty: number }) {
    return quote(params);
  }
}

@Module({
  imports: [
    JsonRpcModule.forRoot({
      security: { rolesResolver: (request) => String(request.headers['x-roles'] ?? '').split(',') },
    }),
  ],
  providers: [CatalogRpc],
})
class GuardedBenchModule {}

const app = await NestFactory.create<NestFastifyApplication>(GuardedBenchModule, new FastifyAdapter(), { logger: false });
await app.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
console.log(`listening ${(app.getHttpServer().address() as { port: number }).port}`);
