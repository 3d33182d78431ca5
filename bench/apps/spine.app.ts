/** The module side of the spine benchmark: the same `echo` and `add` as the bare baseline. */
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
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

const app = await NestFactory.create<NestFastifyApplication>(BenchModule, new FastifyAdapter(), { logger: false });
await app.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
process.send?.({ port: (app.getHttpServer().address() as { port: number }).port });
