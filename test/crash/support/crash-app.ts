/**
 * The app the crash tests kill, run as a child process (compiled by compile-child.ts):
 * `node crash-app.js` with CRASH_STORE=sqlite (CRASH_SQLITE_FILE), CRASH_STORE=redis
 * (REDIS_URL, CRASH_KEY_PREFIX) or CRASH_STORE=redis-cluster (CRASH_REDIS_NODES: `host:port,...`,
 * CRASH_KEY_PREFIX). Prints `LISTENING <port>`; Nest's shutdown hooks are on, so
 * SIGTERM is a graceful shutdown and SIGKILL a crash.
 *
 * `jobs.tick` (durable, SSE on the stream route too) yields `{"n":k}` as its k-th row, so a stored
 * event's data names its own position: anything a restart invented would show up as a gap or a
 * mismatch. Each row waits `CRASH_TICK_MS` (default 5), rows come in bursts of `burst` (default 1)
 * so commits group several rows. `jobs.release` ends every `jobs.tick` running at that moment (its
 * stream completes with `done`).
 */
import 'reflect-metadata';
import { Injectable, Module, type INestApplication, type OnApplicationShutdown } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Cluster } from 'ioredis';
import {
  JsonRpcModule,
  RedisStreamStore,
  RpcMethod,
  RpcStream,
  SqliteStreamStore,
  StreamFormat,
  type RpcContext,
  type StreamStore,
} from '../../../libs/server/src/index.js';

const tickMs = Number(process.env.CRASH_TICK_MS ?? 5);
/** How many times `jobs.release` was called: a tick runs while it stays what it was at its start. */
let releases = 0;

@Injectable()
class Ticker {
  @RpcMethod('jobs.tick')
  @RpcStream({ durable: true, format: StreamFormat.Sse })
  async *tick(params: { burst?: number } | undefined, ctx: RpcContext) {
    const burst = params?.burst ?? 1;
    const generation = releases;
    for (let n = 1; !ctx.signal.aborted && releases === generation; ) {
      await new Promise((resolve) => setTimeout(resolve, tickMs));
      for (let i = 0; i < burst; i++) yield { n: n++ };
    }
  }

  @RpcMethod('jobs.release')
  release() {
    releases++;
    return true;
  }
}

let clusterClient: Cluster | undefined;

function store(): StreamStore {
  if (process.env.CRASH_STORE === 'redis-cluster') {
    clusterClient = new Cluster(process.env.CRASH_REDIS_NODES!.split(',').map((node) => ({ host: node.split(':')[0], port: Number(node.split(':')[1]) })));
    return new RedisStreamStore({ client: clusterClient, keyPrefix: process.env.CRASH_KEY_PREFIX!, heartbeatMs: 1000 });
  }
  if (process.env.CRASH_STORE === 'redis') {
    // Heartbeats every second: a killed instance is presumed dead 3 s later.
    return new RedisStreamStore({ url: process.env.REDIS_URL!, keyPrefix: process.env.CRASH_KEY_PREFIX!, heartbeatMs: 1000 });
  }
  return new SqliteStreamStore({ filename: process.env.CRASH_SQLITE_FILE! });
}

const durableStore = store();

/** A store handed in is not closed by the module (it may be shared): the app closes it. */
@Injectable()
class StoreCloser implements OnApplicationShutdown {
  async onApplicationShutdown(): Promise<void> {
    await durableStore.close();
    clusterClient?.disconnect();
  }
}

@Module({
  imports: [JsonRpcModule.forRoot({ stream: { enabled: true }, durable: { enabled: true, store: durableStore } })],
  providers: [Ticker, StoreCloser],
})
class CrashModule {}

// The platform of the test that spawned it (RPC_TEST_PLATFORM, as test/support/rpc-test-app.ts reads it).
const adapter = process.env.RPC_TEST_PLATFORM === 'express' ? new ExpressAdapter() : new FastifyAdapter();
const app = await NestFactory.create<INestApplication>(CrashModule, adapter, { logger: ['error', 'warn'] });
app.enableShutdownHooks();
await app.listen(0, '127.0.0.1');
console.log(`LISTENING ${(app.getHttpServer().address() as { port: number }).port}`);
