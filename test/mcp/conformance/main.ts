/**
 * Starts the conformance fixture on a free port of 127.0.0.1 (PORT overrides) and prints its MCP
 * URL and platform on one line; `scripts/mcp-conformance.mjs` reads it. RPC_TEST_PLATFORM=express
 * serves it on ExpressAdapter (as the e2e suites' Express project does), else on FastifyAdapter.
 * Tasks are kept in memory: the runner never restarts the server.
 */
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { MemoryStreamStore } from '@nest-jsonrpc/server';
import { ConformanceFixtureModule } from './conformance-fixture.module.js';

const platform = process.env.RPC_TEST_PLATFORM ?? 'fastify';
if (platform !== 'fastify' && platform !== 'express') throw new Error(`RPC_TEST_PLATFORM must be fastify or express, got ${platform}`);
// Only the platform in use is loaded, as in an app made for it.
const adapter = platform === 'express' ? new (await import('@nestjs/platform-express')).ExpressAdapter() : new (await import('@nestjs/platform-fastify')).FastifyAdapter();
const app = await NestFactory.create(ConformanceFixtureModule.forRoot({ store: new MemoryStreamStore() }), adapter, { logger: ['error', 'warn'] });
app.enableShutdownHooks();
await app.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
const { port } = app.getHttpServer().address() as { port: number };
console.log(`MCP conformance fixture on http://127.0.0.1:${port}/mcp (${platform})`);
