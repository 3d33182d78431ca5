/**
 * A plain Nest `@Controller` doing the spine's dispatch (bench/baseline/rpc-dispatch.mjs): what a
 * Nest team writes without the module. Nest parses the body (`@Body()`, its global JSON parser,
 * limit raised to 2 MB as for every side) and runs its router, pipes and exception zone around
 * the handler. The answer goes through the library response (`@Res()`, whose `status()` and
 * `send()` Express and Fastify both have) because a notification answers 204 and a batch 200,
 * which a fixed `@HttpCode` cannot express. BENCH_PLATFORM=fastify (default) or express.
 */
import 'reflect-metadata';
import { Body, Controller, HttpCode, Module, Post, Res, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { answer } from '../baseline/rpc-dispatch.mjs';

const MAX_BODY = 2 * 1024 * 1024;

interface LibraryResponse {
  status(code: number): LibraryResponse;
  send(body?: unknown): unknown;
}

@Controller()
class RpcController {
  @Post('rpc')
  @HttpCode(200)
  rpc(@Body() body: unknown, @Res() res: LibraryResponse) {
    const out = answer(body);
    if (out === undefined) res.status(204).send();
    else res.send(out);
  }
}

@Module({ controllers: [RpcController] })
class PlainModule {}

const platform = process.env.BENCH_PLATFORM ?? 'fastify';
let app: INestApplication;
// Only the platform in use is loaded, as in an app made for it (see spine.app.ts).
if (platform === 'express') {
  const { ExpressAdapter } = await import('@nestjs/platform-express');
  const express = await NestFactory.create<NestExpressApplication>(PlainModule, new ExpressAdapter(), { logger: false });
  express.useBodyParser('json', { limit: MAX_BODY });
  app = express;
} else if (platform === 'fastify') {
  const { FastifyAdapter } = await import('@nestjs/platform-fastify');
  app = await NestFactory.create(PlainModule, new FastifyAdapter({ bodyLimit: MAX_BODY }), { logger: false });
} else {
  throw new Error(`BENCH_PLATFORM must be fastify or express, not ${platform}`);
}
await app.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
process.send?.({ port: (app.getHttpServer().address() as { port: number }).port });
