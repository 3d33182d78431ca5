/**
 * The comparison side of the `mcp` workload: the same `echo` tool in `@rekog/mcp-nest` 2 (the
 * leading Nest MCP module), on Nest 12 + `FastifyAdapter`, stateless Streamable HTTP on `/mcp`
 * (its default: a fresh SDK server per 2025-era request, the SDK's `createMcpHandler` for
 * `2026-07-28` requests), JSON answers. Reports its port, and its CPU usage on request, over IPC.
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Payload } from '@nestjs/microservices';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { McpController, McpStrategy, StreamableHttpTransport, Tool } from '@rekog/mcp-nest';
import { z } from 'zod';
import { reportToRunner } from './mcp-bench-support.js';

@McpController()
class EchoTools {
  @Tool({
    name: 'echo',
    description: 'Returns its text',
    parameters: z.object({ text: z.string() }),
    outputSchema: z.object({ text: z.string() }),
  })
  echo(@Payload() { text }: { text: string }) {
    return { text };
  }
}

const mcp = new McpStrategy({ name: 'bench', version: '1.0.0', transports: [new StreamableHttpTransport()] });

@Module({ controllers: [EchoTools] })
class McpNestBenchModule {}

const app = await NestFactory.create<NestFastifyApplication>(McpNestBenchModule, new FastifyAdapter(), { logger: false });
mcp.setHttpAdapter(app.getHttpAdapter());
app.connectMicroservice({ strategy: mcp }, { inheritAppConfig: true });
await app.startAllMicroservices();
await app.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
reportToRunner((app.getHttpServer().address() as { port: number }).port);
