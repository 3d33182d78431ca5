/**
 * The app the MCP suites drive: a few tools (plain, structured, cached + protected, live stream,
 * failing), a method that is not a tool, and a header identity (`x-user`, `x-roles`) set by an
 * `onRequest` hook, as on `/rpc`.
 */
import {
  Catch,
  Injectable,
  Module,
  UseFilters,
  UseGuards,
  UseInterceptors,
  type ArgumentsHost,
  type CallHandler,
  type CanActivate,
  type ExceptionFilter,
  type ExecutionContext,
  type INestApplication,
  type NestInterceptor,
  UnauthorizedException,
} from '@nestjs/common';
import { map } from 'rxjs';
import { IsInt, IsNumber, IsString, Max, Min } from 'class-validator';
import { JsonRpcModule, RpcCache, RpcException, RpcMcp, RpcMethod, RpcRateLimit, RpcStream, getRpcContext, type JsonRpcModuleOptions, type RpcContext } from '@nest-jsonrpc/server';
import { headerIdentity } from '../../security/security-apps.js';
import { startTestApp, type TestApp } from '../../support/rpc-test-app.js';

export class AddDto {
  @IsNumber() a!: number;
  @IsNumber() b!: number;
}

export class SumDto {
  @IsNumber() sum!: number;
}

export class QuotientDto {
  @IsNumber() quotient!: number;
}

export class CountDto {
  @IsInt() @Min(1) @Max(50) count!: number;
}

export class EchoDto {
  @IsString() text!: string;
}

/** What the guards saw, per call. */
export const seen: Array<{ method: string; transport: string; url: string }> = [];

@Injectable()
export class RecordingGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const rpc = getRpcContext(context)!;
    seen.push({ method: rpc.method, transport: rpc.transport, url: rpc.request.url });
    return true;
  }
}

/** Lets only a caller the app knows through, as an auth guard (Passport's) does. */
@Injectable()
export class SignedInGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    if ((getRpcContext(context)!.request as { user?: unknown }).user === undefined) throw new UnauthorizedException('Sign in first');
    return true;
  }
}

/** Wraps a result, as an app's response-shaping interceptor would. */
@Injectable()
export class WrapInterceptor implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler) {
    return next.handle().pipe(map((value) => ({ wrapped: value })));
  }
}

export class DomainError extends Error {}

/** Maps a domain error to an RPC error, as an app's exception filter would. */
@Catch(DomainError)
export class DomainErrorFilter implements ExceptionFilter {
  catch(exception: DomainError, _host: ArgumentsHost) {
    throw new RpcException(`Domain: ${exception.message}`, { code: 4040 });
  }
}

@Injectable()
export class Tools {
  runs = { report: 0 };
  aborted = 0;

  @RpcMethod('math.add', { description: 'Adds two numbers', result: SumDto })
  @RpcMcp({ title: 'Add', annotations: { readOnlyHint: true } })
  @UseGuards(RecordingGuard)
  add(p: AddDto) {
    return { sum: p.a + p.b };
  }

  @RpcMethod('math.divide', { description: 'Divides a by b', result: QuotientDto })
  @RpcMcp()
  divide(p: AddDto) {
    if (p.b === 0) throw new RpcException('Division by zero', { code: 4001, data: { b: 0 } });
    return { quotient: p.a / p.b };
  }

  @RpcMethod('echo', { description: 'Echoes text' })
  @RpcMcp({ format: 'plain' })
  echo(p: EchoDto) {
    return p.text;
  }

  @RpcMethod('report.daily', { roles: ['reader'], description: 'The daily report' })
  @RpcCache({ ttl: 60 })
  @RpcMcp()
  report() {
    this.runs.report++;
    return { rows: 3 };
  }

  @RpcMethod('report.audit', { roles: ['auditor'], description: 'The audit trail' })
  @RpcMcp()
  audit() {
    return { entries: 2 };
  }

  @RpcMethod('account.whoami', { description: 'Who is calling (needs a signed-in caller)' })
  @RpcMcp()
  @UseGuards(SignedInGuard)
  whoami(_p: unknown, ctx: RpcContext) {
    return { id: (ctx.request as { user?: { id?: string } }).user?.id ?? null };
  }

  @RpcMethod('limited.ping')
  @RpcRateLimit({ limit: 2, interval: 60 })
  @RpcMcp()
  ping() {
    return 'pong';
  }

  @RpcMethod('chat.stream')
  @RpcStream()
  @RpcMcp({ description: 'Streams words' })
  async *chat(p: CountDto, ctx: RpcContext) {
    for (let i = 0; i < p.count; i++) {
      if (ctx.signal.aborted) {
        this.aborted++;
        return;
      }
      yield { delta: `w${i} ` };
    }
  }

  @RpcMethod('numbers.stream')
  @RpcStream()
  @RpcMcp()
  *numbers(p: CountDto) {
    for (let i = 0; i < p.count; i++) yield { n: i };
  }

  @RpcMethod('slow.stream')
  @RpcStream()
  @RpcMcp()
  async *slow(_p: unknown, ctx: RpcContext) {
    try {
      for (let i = 0; ; i++) {
        yield { delta: '.' };
        await new Promise((resolve) => setTimeout(resolve, 20));
        if (ctx.signal.aborted) return;
      }
    } finally {
      this.aborted++;
    }
  }

  @RpcMethod('boom')
  @RpcMcp()
  boom(): never {
    throw new Error('secret database password in this message');
  }

  @RpcMethod('wrapped.value')
  @RpcMcp()
  @UseInterceptors(WrapInterceptor)
  wrapped(p: EchoDto) {
    return p.text;
  }

  @RpcMethod('domain.fail')
  @RpcMcp()
  @UseFilters(DomainErrorFilter)
  domainFail(): never {
    throw new DomainError('no such invoice');
  }

  @RpcMethod('internal.only')
  internal() {
    return 'not a tool';
  }
}

export function mcpModule(options: JsonRpcModuleOptions = {}) {
  @Module({
    imports: [JsonRpcModule.forRoot({ stream: { enabled: true }, ...options, mcp: { enabled: true, name: 'mcp-test', version: '9.9.9', ...options.mcp } })],
    providers: [Tools, RecordingGuard, SignedInGuard],
  })
  class McpTestModule {}
  return McpTestModule;
}

export function startMcpApp(options: JsonRpcModuleOptions = {}, configure?: (app: INestApplication) => void): Promise<TestApp> {
  return startTestApp(mcpModule(options), (app) => {
    headerIdentity(app);
    configure?.(app);
  });
}
