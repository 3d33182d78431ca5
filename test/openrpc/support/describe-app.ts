/**
 * A real Nest app served by today's @nest-jsonrpc/server (calls, a stream, a durable stream, a
 * role-protected method), and the OpenRPC document that describes it, built with the schema and
 * OpenRPC builders exactly as the registry will feed them. Shared by the generator and explorer
 * suites.
 */
import { Injectable, Module } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Type } from 'class-transformer';
import { IsDefined, IsEmail, IsEnum, IsInt, IsNumber, IsOptional, IsString, IsUUID, Matches, Max, MaxLength, Min, MinLength, ValidateNested } from 'class-validator';
import { setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import {
  JsonRpcModule, MemoryStreamStore, RpcAccessDeniedException, RpcCtx, RpcMethod, RpcParam, RpcStream, StreamFormat, progress, type RpcContext,
} from '@nest-jsonrpc/server';
import { MethodSchemaBuilder } from '../../../libs/server/src/schema/index.js';
import { buildOpenRpcDocument, type OpenRpcDocument, type OpenRpcMethodSource } from '../../../libs/server/src/openrpc/index.js';
import { startTestApp, type TestApp } from '../../support/rpc-test-app.js';

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

/** A string with markup: rendered by the explorer, it must show as text. */
export const HOSTILE_TEXT = '<img src=x onerror="window.__xss=1"><b>bold?</b>';

@Injectable()
export class DescribeRpc {
  @RpcMethod('math.add')
  add(p: AddDto) {
    return { sum: p.a + p.b };
  }

  @RpcMethod('math.subtract')
  subtract(@RpcParam('minuend') minuend: number, @RpcParam('subtrahend') subtrahend: number) {
    return minuend - subtrahend;
  }

  @RpcMethod('user.create')
  create(p: CreateUserDto): UserResult {
    return { id: randomUUID(), name: p.name, email: p.email };
  }

  @RpcMethod('notes.echo')
  echo(@RpcParam('text') text: string) {
    return { text, html: HOSTILE_TEXT };
  }

  @RpcMethod('log.event')
  event(@RpcParam('message') message: string) {
    receivedNotifications.push(message);
  }

  /** Needs the `admin` role: the test identity hook gives it for `Authorization: Bearer admin`. */
  @RpcMethod('admin.stats', { roles: ['admin'] })
  stats(_params: unknown, @RpcCtx() ctx: RpcContext) {
    if (!ctx.hasRole('admin')) throw new RpcAccessDeniedException();
    return { users: 42 };
  }

  @RpcMethod('chat.stream')
  @RpcStream({ format: StreamFormat.Ndjson })
  async *chat(p: ChatDto, ctx: RpcContext) {
    const words = p.prompt.split(/\s+/).filter(Boolean);
    try {
      for (const [index, word] of words.entries()) {
        await sleep(p.delayMs ?? 100, undefined, { signal: ctx.signal });
        yield { index, delta: word };
      }
    } finally {
      if (ctx.signal.aborted) abortedChats.push(p.prompt);
    }
  }

  @RpcMethod('report.generate')
  @RpcStream({ durable: true })
  async *generate(p: ReportDto, ctx: RpcContext) {
    for (let step = 1; step <= p.steps; step++) {
      await sleep(p.delayMs, undefined, { signal: ctx.signal });
      yield progress({ percent: Math.round((step / p.steps) * 100), step });
    }
    yield { report: '/reports/1.pdf', pages: p.steps * 2 };
  }
}

/** The methods as the registry will describe them (schemas from the same classes and decorators). */
export function describeMethods(): { methods: OpenRpcMethodSource[]; components: ReturnType<MethodSchemaBuilder['components']> } {
  const b = new MethodSchemaBuilder();
  const dto = (dtoClass: new () => object) => ({ kind: 'dto' as const, dtoClass, positional: false, rejectUnknown: true });
  const methods: OpenRpcMethodSource[] = [
    { name: 'math.add', summary: 'Adds two numbers', tags: ['math'], schemas: b.describe('math.add', { params: dto(AddDto), result: SumResult }) },
    {
      name: 'math.subtract',
      summary: 'Subtracts; positional [42, 23] works too',
      tags: ['math'],
      schemas: b.describe('math.subtract', {
        params: { kind: 'named', rejectUnknown: true, params: [{ name: 'minuend', type: Number }, { name: 'subtrahend', type: Number }] },
        result: { type: 'number' },
      }),
    },
    {
      name: 'user.create',
      summary: 'Creates a user',
      description: 'Validates every field; the address is required.',
      tags: ['users'],
      schemas: b.describe('user.create', { params: dto(CreateUserDto), result: UserResult }),
      errors: [{ code: 409, message: 'Email already taken' }],
    },
    {
      name: 'notes.echo',
      summary: 'Echoes text back',
      description: `Answers ${HOSTILE_TEXT} too.`,
      tags: ['notes'],
      schemas: b.describe('notes.echo', { params: { kind: 'named', rejectUnknown: true, params: [{ name: 'text', type: String }] }, result: { type: 'object', properties: { text: { type: 'string' }, html: { type: 'string' } }, required: ['text', 'html'] } }),
    },
    {
      name: 'log.event',
      summary: 'Records an event (send it as a notification)',
      tags: ['notes'],
      schemas: b.describe('log.event', { params: { kind: 'named', rejectUnknown: true, params: [{ name: 'message', type: String }] }, result: { type: 'null' } }),
    },
    { name: 'admin.stats', summary: 'Usage numbers (admins)', tags: ['admin'], hasRoles: true, schemas: b.describe('admin.stats', { params: { kind: 'any' }, result: { type: 'object', properties: { users: { type: 'integer' } }, required: ['users'] } }) },
    {
      name: 'chat.stream',
      summary: 'Streams a reply word by word',
      tags: ['streams'],
      schemas: b.describe('chat.stream', { params: dto(ChatDto), row: ChatRow }),
      stream: { format: 'ndjson', path: '/rpc/stream', durable: false },
    },
    {
      name: 'report.generate',
      summary: 'Builds a report in the background',
      tags: ['streams'],
      schemas: b.describe('report.generate', { params: dto(ReportDto), row: ReportRow }),
      stream: { format: 'sse', path: '/rpc', durable: true, streamsPath: '/rpc/streams' },
    },
  ];
  return { methods, components: b.components() };
}

export function buildDescribeDocument(origin: string): OpenRpcDocument {
  const { methods, components } = describeMethods();
  return buildOpenRpcDocument({
    info: { title: 'Describe test API', version: '1.0.0', description: 'The explorer and generator test app' },
    servers: [{ name: 'default', url: `${origin}/rpc` }],
    methods,
    components,
  });
}

@Module({
  imports: [JsonRpcModule.forRoot({ stream: { enabled: true }, durable: { enabled: true, store: new MemoryStreamStore() } })],
  providers: [DescribeRpc],
})
export class DescribeAppModule {}

/**
 * Starts the app on 127.0.0.1:0 with `GET /rpc/openrpc.json` and an identity hook
 * (`Authorization: Bearer <role>` -> `request.user = { id: 'tester', roles: [<role>] }`).
 * `routes` may add more (the explorer's assets).
 */
export async function startDescribeApp(routes?: (fastify: any, document: () => OpenRpcDocument) => void): Promise<TestApp & { document: () => OpenRpcDocument }> {
  const state: { document?: OpenRpcDocument } = {};
  const current = () => state.document!;
  const t = await startTestApp(DescribeAppModule, (app: NestFastifyApplication) => {
    const fastify = app.getHttpAdapter().getInstance();
    fastify.addHook('onRequest', (request: any, _reply: unknown, done: () => void) => {
      const match = /^Bearer (\w+)$/.exec(request.headers.authorization ?? '');
      if (match) request.user = { id: 'tester', roles: [match[1]] };
      done();
    });
    fastify.get('/rpc/openrpc.json', (_request: unknown, reply: any) => {
      reply.header('content-type', 'application/json; charset=utf-8').send(JSON.stringify(current()));
    });
    routes?.(fastify, current);
  });
  state.document = buildDescribeDocument(t.url);
  return Object.assign(t, { document: current });
}
