import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Injectable, Module, type INestApplication, type Type } from '@nestjs/common';
import {
  JsonRpcModule,
  RpcException,
  RpcMethod,
  RpcStream,
  progress,
  type DurableRpcContext,
  type JsonRpcModuleOptions,
  type RpcContext,
} from '@nest-jsonrpc/server';
import { interval, map, take } from 'rxjs';
import { sleep } from '../../support/async.js';
import { onEveryRequest } from '../../support/rpc-test-app.js';

/**
 * A producer the test drives by hand: `push` releases one row, `end` finishes, `fail` throws.
 * It honours the stream's signal, and records whether its `finally` ran.
 */
export class ManualFeed {
  readonly queue: Array<{ value?: unknown; end?: true; error?: unknown }> = [];
  private wake: (() => void) | undefined;
  finallyRan = false;
  aborted = false;

  constructor(readonly streamId: string, readonly signal: AbortSignal) {
    signal.addEventListener('abort', () => {
      this.aborted = true;
      this.notify();
    });
  }

  push(...values: unknown[]): void {
    for (const value of values) this.queue.push({ value });
    this.notify();
  }

  end(): void {
    this.queue.push({ end: true });
    this.notify();
  }

  fail(error: unknown): void {
    this.queue.push({ error });
    this.notify();
  }

  async *rows(): AsyncGenerator<unknown> {
    try {
      for (;;) {
        while (this.queue.length === 0) {
          if (this.signal.aborted) return;
          await new Promise<void>((resolve) => (this.wake = resolve));
        }
        const item = this.queue.shift()!;
        if (item.end) return;
        if (item.error !== undefined) throw item.error;
        yield item.value;
      }
    } finally {
      this.finallyRan = true;
    }
  }

  private notify(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }
}

export const feeds = new Map<string, ManualFeed>();

export class JobFailed extends RpcException {
  constructor() {
    super('The job failed', { code: -32050, data: { step: 2 } });
  }
}

@Injectable()
export class DurableJobs {
  @RpcMethod('jobs.manual')
  @RpcStream({ durable: true })
  manual(_params: unknown, ctx: RpcContext) {
    const c = ctx as DurableRpcContext;
    const feed = new ManualFeed(c.streamId, c.signal);
    feeds.set(c.streamId, feed);
    return feed.rows();
  }

  /** n rows `{i}` (1..n), `delayMs` apart; every 10th is a progress row. */
  @RpcMethod('jobs.count')
  @RpcStream({ durable: true })
  async *count(params: { n: number; delayMs?: number }, ctx: RpcContext) {
    for (let i = 1; i <= params.n; i++) {
      if (ctx.signal.aborted) return;
      if (params.delayMs) await sleep(params.delayMs);
      yield i % 10 === 0 ? progress({ percent: (i / params.n) * 100 }) : { i };
    }
  }

  @RpcMethod('jobs.fail')
  @RpcStream({ durable: true })
  async *fail() {
    yield { step: 1 };
    yield { step: 2 };
    throw new JobFailed();
  }

  @RpcMethod('jobs.crash')
  @RpcStream({ durable: true })
  async *crash() {
    yield { step: 1 };
    throw new Error('database password is hunter2');
  }

  @RpcMethod('jobs.admin', { roles: ['admin'] })
  @RpcStream({ durable: true })
  admin(_params: unknown, ctx: RpcContext) {
    return this.manual(_params, ctx);
  }

  @RpcMethod('jobs.observable')
  @RpcStream({ durable: true })
  observable() {
    return interval(5).pipe(
      take(3),
      map((k) => ({ tick: k })),
    );
  }

  @RpcMethod('jobs.notIterable')
  @RpcStream({ durable: true })
  notIterable() {
    return 42;
  }

  @RpcMethod('jobs.needsName')
  @RpcStream({ durable: true })
  needsName(params: { name?: unknown }) {
    if (typeof params?.name !== 'string') throw new RpcException('Invalid params', { code: -32602, data: [{ path: 'name', message: 'name is required', code: null }] });
    return [{ hello: params.name }];
  }

  @RpcMethod('math.double')
  double(params: { x: number }) {
    return params.x * 2;
  }
}

export function durableModule(options: JsonRpcModuleOptions, providers: Type<unknown>[] = [DurableJobs]): Type<unknown> {
  @Module({ imports: [JsonRpcModule.forRoot(options)], providers })
  class DurableTestModule {}
  return DurableTestModule;
}

/**
 * Who is calling, for tests: `x-user` becomes `request.user.id`, `x-roles` (comma-separated) its
 * roles — set before routing (a Fastify hook, an Express middleware), so the durable REST routes
 * see it as `/rpc` does.
 */
export function headerAuth(app: INestApplication): void {
  onEveryRequest(app, (request) => {
    const user = request.headers['x-user'];
    if (typeof user === 'string') {
      const roles = request.headers['x-roles'];
      request.user = { id: user, roles: typeof roles === 'string' ? roles.split(',') : [] };
    }
  });
}

export function tempDir(): { dir: string; file: (name?: string) => string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'nest-jsonrpc-durable-'));
  return { dir, file: (name = 'streams.sqlite') => join(dir, name), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
