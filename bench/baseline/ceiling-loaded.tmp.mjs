/**
 * The ceiling of the spine workloads on one platform: a Nest app without the module, whose own
 * HTTP instance (`app.getHttpAdapter().getInstance()`) gets a raw POST /rpc route running the
 * dispatch of rpc-dispatch.mjs. Every request still passes what Nest's adapter puts in front of
 * every route of that instance (its hooks on Fastify, its hook middleware on Express), so no
 * route living in a Nest app — the module's included — can beat this one by much.
 *
 * BENCH_PLATFORM=fastify (default): FastifyAdapter, Fastify's own JSON parser and serializer.
 * BENCH_PLATFORM=express: ExpressAdapter (Express 5); the route parses with `express.json()` (the
 * parser Nest's adapter uses) and answers with `res.json()`. It is added before `app.init()`, so
 * it runs ahead of Nest's global body parsers: this route does the one JSON parse it needs.
 * With BENCH_EXPRESS_ROUTE=minimal the route skips Express's helpers instead: it reads the body
 * stream itself (same size limit) and answers with Node's `writeHead`/`end` — no body-parser, no
 * `res.json()` (whose ETag hashes every body): the least a route on that instance can cost.
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { answer } from "/work/main/bench/baseline/rpc-dispatch.mjs";
import * as jr from "@nest-jsonrpc/server"; globalThis.__jr = jr;

const MAX_BODY = 2 * 1024 * 1024;
const platform = process.env.BENCH_PLATFORM ?? 'fastify';

class EmptyModule {}
Module({})(EmptyModule);

let app;
if (platform === 'fastify') {
  const { FastifyAdapter } = await import('@nestjs/platform-fastify');
  app = await NestFactory.create(EmptyModule, new FastifyAdapter({ bodyLimit: MAX_BODY }), { logger: false });
  app.getHttpAdapter().getInstance().register(async (child) => {
    child.post('/rpc', (request, reply) => {
      const out = answer(request.body);
      return out === undefined ? reply.code(204).send() : reply.send(out);
    });
  });
} else if (platform === 'express') {
  const { ExpressAdapter } = await import('@nestjs/platform-express');
  const { default: express } = await import('express');
  app = await NestFactory.create(EmptyModule, new ExpressAdapter(), { logger: false });
  const instance = app.getHttpAdapter().getInstance();
  if (process.env.BENCH_EXPRESS_ROUTE === 'minimal') {
    instance.post('/rpc', (req, res) => {
      const chunks = [];
      let size = 0;
      req.on('data', (chunk) => {
        size += chunk.length;
        if (size > MAX_BODY) {
          res.writeHead(413, { connection: 'close' }).end();
          req.destroy();
        } else chunks.push(chunk);
      });
      req.on('end', () => {
        let out;
        try {
          out = answer(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        } catch {
          return res.writeHead(400).end();
        }
        if (out === undefined) return res.writeHead(204).end();
        const text = JSON.stringify(out);
        res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) }).end(text);
      });
    });
  } else {
    instance.post('/rpc', express.json({ limit: MAX_BODY }), (req, res) => {
      const out = answer(req.body);
      if (out === undefined) res.status(204).end();
      else res.json(out);
    });
  }
} else {
  throw new Error(`BENCH_PLATFORM must be fastify or express, not ${platform}`);
}
await app.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
process.send?.({ port: app.getHttpServer().address().port });
