/**
 * Our side of the `mcp` workload: the same `echo` tool as `mcp-nest-app.ts` — a class-validator
 * DTO in, an object result (so `outputSchema` and `structuredContent`), compact JSON text — served
 * by the module's `POST /mcp` (`mcp.enabled`), on Nest 12 + `FastifyAdapter`. Reports its port,
 * and its CPU usage on request, over IPC.
 */
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { JsonRpcModule, RpcMcp, RpcMethod, type JsonRpcModuleOptions } from '@nest-jsonrpc/server';
import { IsString } from 'class-validator';
import { reportToRunner } from './mcp-bench-support.js';

class EchoParams {
  @IsString()
  text!: string;
}

class EchoResult {
  @IsString()
  text!: string;
}

@Injectable()
class EchoTools {
  @RpcMethod('echo', { description: 'Returns its text', result: EchoResult })
  @RpcMcp()
  echo({ text }: EchoParams): EchoResult {
    return { text };
  }
}

const options: JsonRpcModuleOptions = { mcp: { enabled: true, defaultFormat: 'json', rest: true } };

@Module({ imports: [JsonRpcModule.forRoot(options)], providers: [EchoTools] })
class McpBenchModule {}

const app = await NestFactory.create<NestFastifyApplication>(McpBenchModule, new FastifyAdapter(), { logger: false, abortOnError: false });
await app.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
reportToRunner((app.getHttpServer().address() as { port: number }).port);
