/**
 * A durable app run as a child process by the crash test (compiled by compile-child.ts):
 * `node child-app.js <sqlite file>` prints `LISTENING <port>` and serves `jobs.tick`, which
 * emits `{n}` every 15 ms until cancelled.
 */
import 'reflect-metadata';
import { Injectable, Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { JsonRpcModule, RpcMethod, RpcStream, SqliteStreamStore, type RpcContext } from '../../../libs/server/src/index.js';

@Injectable()
class Ticker {
  @RpcMethod('jobs.tick')
  @RpcStream({ durable: true })
  async *tick(_params: unknown, ctx: RpcContext) {
    for (let n = 1; !ctx.signal.aborted; n++) {
      await new Promise((resolve) => setTimeout(resolve, 15));
      yield { n };
    }
  }
}

@Module({
  imports: [JsonRpcModule.forRoot({ durable: { enabled: true, store: new SqliteStreamStore({ filename: process.argv[2] }) } })],
  providers: [Ticker],
})
class ChildModule {}

// The platform of the test that spawned it (RPC_TEST_PLATFORM, as test/support/rpc-test-app.ts reads it).
const adapter = process.env.RPC_TEST_PLATFORM === 'express' ? new ExpressAdapter() : new FastifyAdapter();
const app = await NestFactory.create<INestApplication>(ChildModule, adapter, { logger: false });
await app.listen(0, '127.0.0.1');
console.log(`LISTENING ${(app.getHttpServer().address() as { port: number }).port}`);
