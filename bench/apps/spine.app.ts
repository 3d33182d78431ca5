/**
 * The module side of the spine benchmark: the same `echo` and `add` as the bare baseline.
 * BENCH_PLATFORM=fastify (default) serves it on FastifyAdapter, BENCH_PLATFORM=express on
 * ExpressAdapter with Nest's defaults (its global body parsers on), as `nest new` makes an app.
 * Only the module's public API is used, so this file also compiles against older builds of the
 * module for the A/B mode (bench/lib/ab-builds.mjs).
 */
import 'reflect-metadata';
import { Injectable, Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { JsonRpcModule, RpcMethod, RpcParam } from '@nest-jsonrpc/server';

@Injectable()
class BenchMethods {
  @RpcMethod('echo')
  echo(params: unknown) {
    return params;
  }

  @RpcMethod('add')
  add(@RpcParam('a') a: number, @RpcParam('b') b: number) {
    return a + b;
  }
}

@Module({ imports: [JsonRpcModule.forRoot({ maxRequestSize: 2 * 1024 * 1024 })], providers: [BenchMethods] })
class BenchModule {}

const platform = process.env.BENCH_PLATFORM ?? 'fastify';
if (platform !== 'fastify' && platform !== 'express') throw new Error(`BENCH_PLATFORM must be fastify or express, not ${platform}`);
// Only the platform in use is loaded, as in an app made for it (and as nest-ceiling.mjs does): a
// Fastify process holding Express, Multer and body-parser too would start with a bigger heap.
const app: INestApplication =
  platform === 'express'
    ? await NestFactory.create(BenchModule, new (await import('@nestjs/platform-express')).ExpressAdapter(), { logger: false })
    : await NestFactory.create(BenchModule, new (await import('@nestjs/platform-fastify')).FastifyAdapter(), { logger: false });
await app.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
process.send?.({ port: (app.getHttpServer().address() as { port: number }).port });
