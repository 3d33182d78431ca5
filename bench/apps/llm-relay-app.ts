/**
 * Bench: LLM tokens relayed through the module — an `@RpcStream` SSE method streaming an
 * `openAiChat` adapter call (`toStreamRows`) from the fake provider at UPSTREAM_URL. Started by
 * bench/workloads/llm.mjs; reports its port over IPC.
 */
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { openAiChat, toStreamRows } from '@nest-jsonrpc/llm';
import { JsonRpcModule, RpcMethod, RpcStream, StreamFormat, type RpcContext } from '@nest-jsonrpc/server';

@Injectable()
class RelayRpc {
  private readonly provider = openAiChat({ apiKey: 'bench', baseUrl: `${process.env.UPSTREAM_URL}/v1` });

  /** `model` selects the fake provider's stream (`relay:<tokens>:<paceMs>`). */
  @RpcMethod('bench.relay')
  @RpcStream({ format: StreamFormat.Sse })
  relay(p: { model: string }, ctx: RpcContext) {
    return toStreamRows(this.provider.stream({ model: p.model, messages: [{ role: 'user', content: 'go' }] }, { signal: ctx.signal }));
  }
}

@Module({ imports: [JsonRpcModule.forRoot({ stream: { enabled: true } })], providers: [RelayRpc] })
class RelayBenchModule {}

const app = await NestFactory.create<NestFastifyApplication>(RelayBenchModule, new FastifyAdapter(), { logger: ['error', 'warn'] });
await app.listen(0, '127.0.0.1');
process.send?.({ port: (app.getHttpServer().address() as { port: number }).port });
// The workload asks for this process's CPU time to report the CPU each relayed token costs.
process.on('message', (message) => {
  if (message === 'cpu') process.send?.({ cpu: process.cpuUsage() });
});
