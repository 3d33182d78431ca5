/**
 * Reference for the spine workloads: an empty POST /rpc answering 204 inside a Nest app on
 * FastifyAdapter, without the module. Against bare-empty.mjs it shows what Nest's adapter (its
 * onRequest/onResponse hooks on every route) costs before any JSON-RPC work is done.
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';

class EmptyModule {}
Module({})(EmptyModule);

const app = await NestFactory.create(EmptyModule, new FastifyAdapter(), { logger: false });
app.getHttpAdapter().getInstance().register(async (child) => {
  child.post('/rpc', (_request, reply) => {
    reply.code(204).send();
  });
});
await app.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
process.send?.({ port: app.getHttpServer().address().port });
