import 'reflect-metadata';
import type { IncomingHttpHeaders } from 'node:http';
import type { INestApplication, LoggerService, Type } from '@nestjs/common';
import { NestFactory, type AbstractHttpAdapter } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';

/** The HTTP platforms the module serves on; the e2e suites run on each (jest.config.mjs: one project per platform). */
export type TestPlatform = 'fastify' | 'express';

/**
 * The platform of this test run: the jest project's `RPC_TEST_PLATFORM` global (or the
 * environment variable of that name, for a run outside the projects), Fastify by default.
 */
export const TEST_PLATFORM: TestPlatform = platformNamed((globalThis as { RPC_TEST_PLATFORM?: string }).RPC_TEST_PLATFORM ?? process.env.RPC_TEST_PLATFORM);

function platformNamed(name: string | undefined): TestPlatform {
  if (name === undefined || name === 'fastify') return 'fastify';
  if (name === 'express') return 'express';
  throw new Error(`RPC_TEST_PLATFORM must be fastify or express, got ${name}`);
}

/** A Nest HTTP adapter of `platform` (Fastify's gets `fastifyOptions`). */
export function testAdapter(platform: TestPlatform = TEST_PLATFORM, fastifyOptions?: ConstructorParameters<typeof FastifyAdapter>[0]): AbstractHttpAdapter {
  return platform === 'express' ? new ExpressAdapter() : new FastifyAdapter(fastifyOptions);
}

/** What a test's request hook sees of a request, on either platform. */
export interface HookRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  user?: unknown;
}

/** What a test's request hook can do to the answer, on either platform. */
export interface HookReply {
  /** Sets a header of the answer (as CORS or security middleware do). */
  header(name: string, value: string): void;
  /** Runs `listener` when the response closes. */
  onClose(listener: () => void): void;
}

/**
 * Runs `around` on every request before routing, on either platform — a Fastify `onRequest` hook,
 * an Express middleware — as an app's auth, header or tracing middleware would: `request.user`
 * set here is what guards and the module see, headers set on `reply` go out with every answer,
 * and the request goes on when `proceed` is called (inside a context `around` sets up, if any).
 */
export function aroundEveryRequest(app: INestApplication, around: (request: HookRequest, reply: HookReply, proceed: () => void) => void): void {
  const adapter = app.getHttpAdapter();
  if (adapter.getType() === 'fastify') {
    type FastifyReplyLike = { header(name: string, value: string): unknown; raw: { once(event: 'close', listener: () => void): unknown } };
    adapter.getInstance().addHook('onRequest', (request: HookRequest, reply: FastifyReplyLike, done: () => void) => {
      around(request, { header: (name, value) => void reply.header(name, value), onClose: (listener) => void reply.raw.once('close', listener) }, done);
    });
    return;
  }
  type ExpressResponseLike = { setHeader(name: string, value: string): unknown; once(event: 'close', listener: () => void): unknown };
  app.use((req: HookRequest, res: ExpressResponseLike, next: () => void) => {
    around(req, { header: (name, value) => void res.setHeader(name, value), onClose: (listener) => void res.once('close', listener) }, () => next());
  });
}

/** `aroundEveryRequest` for a hook that only looks (or sets `user`, headers): the request goes on after it. */
export function onEveryRequest(app: INestApplication, hook: (request: HookRequest, reply: HookReply) => void): void {
  aroundEveryRequest(app, (request, reply, proceed) => {
    hook(request, reply);
    proceed();
  });
}

/** Log lines captured from Nest's logger, so tests can assert what was (and was not) logged. */
export class CapturingLogger implements LoggerService {
  readonly lines: Array<{ level: string; message: string; extra: unknown[] }> = [];
  log(message: unknown, ...extra: unknown[]) { this.push('log', message, extra); }
  error(message: unknown, ...extra: unknown[]) { this.push('error', message, extra); }
  warn(message: unknown, ...extra: unknown[]) { this.push('warn', message, extra); }
  debug(message: unknown, ...extra: unknown[]) { this.push('debug', message, extra); }
  verbose(message: unknown, ...extra: unknown[]) { this.push('verbose', message, extra); }
  private push(level: string, message: unknown, extra: unknown[]) {
    this.lines.push({ level, message: String(message), extra });
  }
  text(level?: string): string {
    return this.lines
      .filter((l) => !level || l.level === level)
      .map((l) => [l.message, ...l.extra.map(String)].join(' '))
      .join('\n');
  }
}

export interface TestApp {
  app: INestApplication;
  platform: TestPlatform;
  url: string;
  logger: CapturingLogger;
  /** POST a JSON body (a string is sent verbatim) to `path` (default `/rpc`). */
  post(body: unknown, init?: { path?: string; headers?: Record<string, string> }): Promise<Response>;
  /** POST and parse the JSON answer. */
  rpc(body: unknown, init?: { path?: string; headers?: Record<string, string> }): Promise<{ status: number; headers: Headers; body: any }>;
  close(): Promise<void>;
}

/** Boots `module` on a real socket (127.0.0.1, port 0), the way users run it, on `platform`. */
export async function startTestApp(
  module: Type<unknown>,
  configure?: (app: INestApplication) => void | Promise<void>,
  platform: TestPlatform = TEST_PLATFORM,
): Promise<TestApp> {
  const logger = new CapturingLogger();
  const app = await NestFactory.create<INestApplication>(module, testAdapter(platform), { logger });
  await configure?.(app);
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address() as { port: number };
  const url = `http://127.0.0.1:${address.port}`;
  const post: TestApp['post'] = (body, init = {}) =>
    fetch(url + (init.path ?? '/rpc'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...init.headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  return {
    app,
    platform,
    url,
    logger,
    post,
    async rpc(body, init) {
      const res = await post(body, init);
      const text = await res.text();
      return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
    },
    close: () => app.close(),
  };
}
