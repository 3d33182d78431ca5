/**
 * The app the MCP tasks suites drive: durable methods and task-marked plain methods, each held
 * open by a gate the test opens (a signal, never a sleep), plus the header identity of the other
 * MCP suites (`x-user`, `x-roles`).
 */
import { Injectable, Module } from '@nestjs/common';
import { IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { JsonRpcModule, RpcException, RpcMcp, RpcMethod, RpcStream, progress, type JsonRpcModuleOptions, type RpcContext, type StreamStore } from '@nest-jsonrpc/server';
import { headerIdentity } from '../../security/security-apps.js';
import { startTestApp, type TestApp } from '../../support/rpc-test-app.js';

/** A door the test opens: producers wait at it (or stop when their signal aborts). */
export class Gate {
  private opened = false;
  private waiters: Array<() => void> = [];
  /** How many producers are waiting right now. */
  waiting = 0;

  open(): void {
    this.opened = true;
    for (const wake of this.waiters.splice(0)) wake();
  }

  close(): void {
    this.opened = false;
  }

  /** Lets through the producers waiting now; the gate stays closed for the next ones (one step at a time). */
  release(): void {
    for (const wake of this.waiters.splice(0)) wake();
  }

  /** Resolves when the gate opens; rejects with the signal's reason when it aborts first. */
  pass(signal: AbortSignal): Promise<void> {
    if (this.opened) return Promise.resolve();
    signal.throwIfAborted();
    this.waiting++;
    return new Promise<void>((resolve, reject) => {
      const wake = () => {
        this.waiting--;
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        this.waiting--;
        this.waiters = this.waiters.filter((w) => w !== wake);
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(wake);
    });
  }
}

export const gates = { report: new Gate(), slow: new Gate(), endless: new Gate(), paced: new Gate() };
/** What the producers saw end, per label: `finished`, `stopped` (their finally ran after an abort). */
export const endings: Record<string, string> = {};

export class ReportDto {
  @IsInt() @Min(1) @Max(20) steps!: number;
  @IsOptional() @IsString() label?: string;
}

export class LabelDto {
  @IsOptional() @IsString() label?: string;
}

@Injectable()
export class Jobs {
  @RpcMethod('jobs.report', { description: 'Writes a report in steps, reporting progress' })
  @RpcStream({ durable: true })
  @RpcMcp()
  async *report(p: ReportDto, ctx: RpcContext) {
    const label = p.label ?? 'report';
    try {
      for (let i = 0; i < p.steps; i++) {
        yield progress({ message: `step ${i + 1} of ${p.steps}`, percent: Math.round(((i + 1) / p.steps) * 100) });
        yield { delta: `part ${i} ` };
        if (i === 0) await gates.report.pass(ctx.signal);
      }
      endings[label] = 'finished';
    } finally {
      endings[label] ??= 'stopped';
    }
  }

  @RpcMethod('jobs.endless', { description: 'Runs until cancelled' })
  @RpcStream({ durable: true })
  @RpcMcp()
  async *endless(p: LabelDto, ctx: RpcContext) {
    const label = p.label ?? 'endless';
    try {
      yield progress('started');
      await gates.endless.pass(ctx.signal);
      yield 'unreachable unless opened';
      endings[label] = 'finished';
    } finally {
      endings[label] ??= 'stopped';
    }
  }

  @RpcMethod('jobs.paced', { description: 'Reports each step once the test lets it through' })
  @RpcStream({ durable: true })
  @RpcMcp()
  async *paced(p: ReportDto, ctx: RpcContext) {
    for (let i = 0; i < p.steps; i++) {
      await gates.paced.pass(ctx.signal);
      yield progress(`step ${i + 1} of ${p.steps}`);
    }
  }

  @RpcMethod('jobs.slow', { description: 'A plain method that may run as a task' })
  @RpcMcp({ task: 'optional' })
  async slow(p: LabelDto, ctx: RpcContext) {
    await gates.slow.pass(ctx.signal);
    return { label: p.label ?? 'slow', done: true };
  }

  @RpcMethod('jobs.required', { description: 'Only runs as a task' })
  @RpcMcp({ task: 'required' })
  required() {
    return 'done as a task';
  }

  @RpcMethod('jobs.fail', { description: 'Fails with its own error after one row' })
  @RpcStream({ durable: true })
  @RpcMcp()
  async *fail() {
    yield 'almost';
    throw new RpcException('Quota exceeded', { code: 4290, data: { quota: 3 } });
  }

  // eslint-disable-next-line require-yield
  @RpcMethod('jobs.crash', { description: 'Dies with an exception that is no RPC error' })
  @RpcStream({ durable: true })
  @RpcMcp()
  async *crash() {
    throw new Error('secret connection string in this message');
  }

  @RpcMethod('jobs.audit', { description: 'Needs the auditor role', roles: ['auditor'] })
  @RpcStream({ durable: true })
  @RpcMcp()
  async *audit() {
    yield 'audited';
  }

  @RpcMethod('jobs.quick', { description: 'A plain tool that never runs as a task' })
  @RpcMcp()
  quick() {
    return 'quick';
  }

  @RpcMethod('jobs.hidden')
  @RpcStream({ durable: true })
  async *hidden() {
    yield 'not a tool';
  }
}

export function tasksModule(store: StreamStore | undefined, options: JsonRpcModuleOptions = {}) {
  @Module({
    imports: [
      JsonRpcModule.forRoot({
        ...options,
        durable: { enabled: true, retention: 3600, ...(store && { store }), ...options.durable },
        mcp: { enabled: true, name: 'mcp-tasks', version: '1.0.0', tasks: { pollIntervalMs: 50 }, ...options.mcp },
      }),
    ],
    providers: [Jobs],
  })
  class McpTasksModule {}
  return McpTasksModule;
}

export function startTasksApp(store: StreamStore | undefined, options: JsonRpcModuleOptions = {}, configure?: Parameters<typeof startTestApp>[1]): Promise<TestApp> {
  return startTestApp(tasksModule(store, options), async (app) => {
    headerIdentity(app);
    await configure?.(app);
  });
}
