/**
 * A real Nest app (calls, a stream, a durable stream, an admin-only method, hostile text) with
 * the module's own OpenRPC document (`GET /rpc/openrpc.json`, `rpc.discover`) and explorer
 * (`GET /rpc/explorer`) switched on: the explorer suite runs against the wired routes.
 */
import { Injectable, Module, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { Type } from 'class-transformer';
import { IsDefined, IsEmail, IsEnum, IsInt, IsNumber, IsOptional, IsString, IsUUID, Matches, Max, MaxLength, Min, MinLength, ValidateNested } from 'class-validator';
import { setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import {
  JsonRpcModule, MemoryStreamStore, RpcAccessDeniedException, RpcCtx, RpcErrorCode, RpcMethod, RpcParam, RpcStream, StreamFormat, progress, type RpcContext,
} from '@nest-jsonrpc/server';
import type { OpenRpcDocument } from '../../../libs/server/src/openrpc/openrpc-document.js';
import { onEveryRequest, startTestApp, type TestApp } from '../../support/rpc-test-app.js';

export enum UserRole { Reader = 'reader', Editor = 'editor' }

export class AddDto {
  @IsNumber() a!: number;
  @IsNumber() b!: number;
}
export class SumResult {
  @IsNumber() sum!: number;
}
export class AddressDto {
  @IsString() @MinLength(2) city!: string;
  @IsOptional() @Matches(/^[0-9]{5}$/) zip?: string;
}
export class CreateUserDto {
  @IsString() @MinLength(2) @MaxLength(40) name!: string;
  @IsEmail() email!: string;
  @IsInt() @Min(13) @Max(130) age!: number;
  @IsEnum(UserRole) role!: UserRole;
  @IsDefined() @ValidateNested() @Type(() => AddressDto) address!: AddressDto;
  @IsOptional() @IsString({ each: true }) tags?: string[];
}
export class UserResult {
  @IsUUID() id!: string;
  @IsString() name!: string;
  @IsEmail() email!: string;
}
export class ChatDto {
  @IsString() @MinLength(1) prompt!: string;
  @IsOptional() @IsInt() @Min(0) @Max(2000) delayMs?: number;
}
export class ChatRow {
  @IsInt() index!: number;
  @IsString() delta!: string;
}
export class ReportDto {
  @IsInt() @Min(1) @Max(100) steps!: number;
  @IsInt() @Min(0) @Max(5000) delayMs!: number;
}
export class ReportRow {
  @IsString() report!: string;
  @IsInt() pages!: number;
}

/** What notifications delivered, for tests to wait on. */
export const receivedNotifications: string[] = [];
/** Prompts of chat streams whose client left (their signal aborted), for tests to wait on. */
export const abortedChats: string[] = [];

/** Markdown the explorer renders: code, emphasis, a list, a safe link and one it must drop. */
export const MARKDOWN_DESCRIPTION = 'Adds `a` and `b`. **Both** are numbers:\n\n- integers\n- or *decimals*\n\nSee [the docs](https://example.com/docs) or [this](javascript:alert(1)).';

/** A string with markup: rendered by the explorer, it must show as text. */
export const HOSTILE_TEXT = '<img src=x onerror="window.__xss=1"><b>bold?</b>';

@Injectable()
export class DescribeRpc {
  @RpcMethod('math.add', { summary: 'Adds two numbers', description: MARKDOWN_DESCRIPTION, tags: ['math'], result: SumResult })
  add(p: AddDto) {
    return { sum: p.a + p.b };
  }

  @RpcMethod('math.subtract', { summary: 'Subtracts; positional [42, 23] works too', tags: ['math'], result: { type: 'number' } })
  subtract(@RpcParam('minuend') minuend: number, @RpcParam('subtrahend') subtrahend: number) {
    return minuend - subtrahend;
  }

  @RpcMethod('user.create', {
    summary: 'Creates a user',
    description: 'Validates every field; the address is required.',
    tags: ['users'],
    result: UserResult,
    errors: [{ code: 409, message: 'Email already taken' }],
  })
  create(p: CreateUserDto): UserResult {
    return { id: randomUUID(), name: p.name, email: p.email };
  }

  @RpcMethod('notes.echo', {
    summary: 'Echoes text back',
    description: `Answers ${HOSTILE_TEXT} too.`,
    tags: ['notes'],
    result: { type: 'object', properties: { text: { type: 'string' }, html: { type: 'string' } }, required: ['text', 'html'] },
  })
  echo(@RpcParam('text') text: string) {
    return { text, html: HOSTILE_TEXT };
  }

  @RpcMethod('log.event', { summary: 'Records an event (send it as a notification)', tags: ['notes'], result: { type: 'null' } })
  event(@RpcParam('message') message: string) {
    receivedNotifications.push(message);
  }

  /**
   * Checks the role itself (not `roles: ['admin']`, which would hide it from the anonymous
   * explorer): the test identity hook gives it for `Authorization: Bearer admin`.
   */
  @RpcMethod('admin.stats', {
    summary: 'Usage numbers (admins)',
    tags: ['admin'],
    result: { type: 'object', properties: { users: { type: 'integer' } }, required: ['users'] },
    errors: [{ code: RpcErrorCode.AccessDenied, message: 'Access denied' }],
  })
  stats(_params: unknown, @RpcCtx() ctx: RpcContext) {
    if (!ctx.hasRole('admin')) throw new RpcAccessDeniedException();
    return { users: 42 };
  }

  /** `roles: ['admin']`: listed only in the documents of callers with the role. */
  @RpcMethod('admin.reset', { roles: ['admin'], summary: 'Resets the counters (admins)', tags: ['admin'], result: { type: 'boolean' } })
  reset() {
    return true;
  }

  @RpcMethod('chat.stream', { summary: 'Streams a reply word by word', tags: ['streams'] })
  @RpcStream({ format: StreamFormat.Ndjson, row: ChatRow })
  async *chat(p: ChatDto, ctx: RpcContext) {
    const words = p.prompt.split(/\s+/).filter(Boolean);
    try {
      for (const [index, word] of words.entries()) {
        await sleep(p.delayMs ?? 100, undefined, { signal: ctx.signal });
        yield { index, delta: index === 0 ? word : ` ${word}` };
      }
    } finally {
      if (ctx.signal.aborted) abortedChats.push(p.prompt);
    }
  }

  @RpcMethod('report.generate', { summary: 'Builds a report in the background', tags: ['streams'] })
  @RpcStream({ durable: true, format: StreamFormat.Sse, row: ReportRow })
  async *generate(p: ReportDto, ctx: RpcContext) {
    for (let step = 1; step <= p.steps; step++) {
      await sleep(p.delayMs, undefined, { signal: ctx.signal });
      yield progress({ percent: Math.round((step / p.steps) * 100), step, stage: step * 2 <= p.steps ? 'collecting' : 'rendering' });
    }
    yield { report: '/reports/1.pdf', pages: p.steps * 2 };
  }

  @RpcMethod('system.time', { summary: 'The server clock (takes no params)', tags: ['system'], result: { type: 'string', format: 'date-time' } })
  time() {
    return new Date().toISOString();
  }
}

/** `Authorization: Bearer refused` is refused by an app guard, on every call and on the document. */
@Injectable()
class RefusingGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    if (context.switchToHttp().getRequest().headers.authorization === 'Bearer refused') throw new RpcAccessDeniedException('Refused by the describe app');
    return true;
  }
}

@Module({
  imports: [
    JsonRpcModule.forRoot({
      stream: { enabled: true },
      durable: { enabled: true, store: new MemoryStreamStore() },
      openrpc: { enabled: true, info: { title: 'Describe test API', version: '1.0.0', description: 'The explorer and generator test app' } },
      explorer: { enabled: true },
    }),
  ],
  providers: [DescribeRpc, { provide: APP_GUARD, useClass: RefusingGuard }],
})
export class DescribeAppModule {}

/**
 * Starts the app on 127.0.0.1:0 with an identity hook (`Authorization: Bearer <role>` ->
 * `request.user = { id: 'tester', roles: [<role>] }`). `document()` is the anonymous caller's
 * document, as `GET /rpc/openrpc.json` answered it after startup.
 */
export async function startDescribeApp(): Promise<TestApp & { document: () => OpenRpcDocument }> {
  const t = await startTestApp(DescribeAppModule, (app) => {
    onEveryRequest(app, (request) => {
      const match = /^Bearer (\w+)$/.exec(request.headers.authorization ?? '');
      if (match) request.user = { id: 'tester', roles: [match[1]] };
    });
  });
  const res = await fetch(`${t.url}/rpc/openrpc.json`);
  if (res.status !== 200) throw new Error(`GET /rpc/openrpc.json answered ${res.status}`);
  const document = (await res.json()) as OpenRpcDocument;
  return Object.assign(t, { document: () => document });
}
