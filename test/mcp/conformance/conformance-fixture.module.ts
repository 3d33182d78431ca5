/**
 * The app MCP's official conformance runner is pointed at: the runner's test tools, written as
 * ordinary RPC methods of this module (no MCP code), so the runner judges what a user of the
 * module would ship. Tools for features the module does not offer (images, audio, embedded
 * resources, logging, sampling, elicitation, input-required) are not here; the expected-failures
 * files beside this one name them and why.
 */
import { Injectable, Module, type DynamicModule } from '@nestjs/common';
import { IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { JsonRpcModule, RpcException, RpcMcp, RpcMethod, RpcStream, type RpcContext, type StreamStore } from '@nest-jsonrpc/server';

export class GreetDto {
  @IsString() name!: string;
}

export class ComputeDto {
  @IsOptional() @IsInt() @Min(0) @Max(600) seconds?: number;
  @IsOptional() @IsString() label?: string;
}

/** Waits `ms`, or rejects with the signal's reason when it aborts first (a cancelled task stops). */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    signal.throwIfAborted();
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

@Injectable()
export class ConformanceTools {
  @RpcMethod('test_simple_text', { description: 'Tests simple text content response' })
  @RpcMcp({ format: 'plain' })
  simpleText() {
    return 'This is a simple text response for testing.';
  }

  @RpcMethod('test_error_handling', { description: 'Tests error response handling' })
  @RpcMcp()
  errorHandling(): never {
    throw new RpcException('This tool intentionally returns an error for testing', { code: -32000 });
  }

  /** Each row is one progress notification when the caller sent a progress token (50 ms apart, as the runner's reference server). */
  @RpcMethod('test_tool_with_progress', { description: 'Tests tool that reports progress notifications' })
  @RpcStream()
  @RpcMcp()
  async *withProgress(_p: unknown, ctx: RpcContext) {
    for (const step of [0, 50, 100]) {
      if (step > 0) await pause(50, ctx.signal);
      yield { delta: `Completed step ${step} of 100. ` };
    }
  }

  // ---- the Tasks extension's fixtures ----------------------------------------------------------

  @RpcMethod('greet', { description: 'Greets by name (never a task)' })
  @RpcMcp({ format: 'plain' })
  greet(p: GreetDto) {
    return `Hello, ${p.name}!`;
  }

  @RpcMethod('slow_compute', { description: 'Sleeps `seconds`, then answers; a task for clients that support tasks' })
  @RpcMcp({ task: 'optional', format: 'plain' })
  async slowCompute(p: ComputeDto, ctx: RpcContext) {
    await pause((p.seconds ?? 0) * 1000, ctx.signal);
    return `Computed ${p.label ?? 'result'} after ${p.seconds ?? 0}s`;
  }

  @RpcMethod('failing_job', { description: 'Fails with a tool error after about a second; runs only as a task' })
  @RpcMcp({ task: 'required' })
  async failingJob(_p: unknown, ctx: RpcContext): Promise<never> {
    await pause(1000, ctx.signal);
    throw new RpcException('The job failed: the input could not be processed', { code: 4000 });
  }

  @RpcMethod('protocol_error_job', { description: 'Dies with an internal error (a failed task)' })
  @RpcMcp({ task: 'optional' })
  async protocolErrorJob(_p: unknown, ctx: RpcContext): Promise<never> {
    await pause(100, ctx.signal);
    throw new Error('the worker crashed');
  }
}

export interface ConformanceFixtureOptions {
  /** Where tasks are kept; default: the module's SQLite file. */
  store?: StreamStore;
}

@Module({})
export class ConformanceFixtureModule {
  static forRoot({ store }: ConformanceFixtureOptions = {}): DynamicModule {
    return {
      module: ConformanceFixtureModule,
      imports: [
        JsonRpcModule.forRoot({
          stream: { enabled: true },
          durable: { enabled: true, ...(store && { store }) },
          mcp: { enabled: true, name: 'nest-jsonrpc-conformance', version: '1.0.0', tasks: { pollIntervalMs: 100 } },
        }),
      ],
      providers: [ConformanceTools],
    };
  }
}
