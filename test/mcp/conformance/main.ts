/**
 * Starts the conformance fixture on a free port of 127.0.0.1 (PORT overrides) and prints its MCP
 * URL on one line; `scripts/mcp-conformance.mjs` reads it. Tasks are kept in memory: the runner
 * never restarts the server.
 */
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { MemoryStreamStore } from '@nest-jsonrpc/server';
import { ConformanceFixtureModule } from './conformance-fixture.module.js';

const app = await NestFactory.create<NestFastifyApplication>(ConformanceFixtureModule.forRoot({ store: new MemoryStreamStore() }), new FastifyAdapter(), {
  logger: ['error', 'warn'],
});
app.enableShutdownHooks();
await app.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
const { port } = app.getHttpServer().address() as { port: number };
console.log(`MCP conformance fixture on http://127.0.0.1:${port}/mcp`);
