import 'reflect-metadata';
import type { LoggerService, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';

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
  app: NestFastifyApplication;
  url: string;
  logger: CapturingLogger;
  /** POST a JSON body (a string is sent verbatim) to `path` (default `/rpc`). */
  post(body: unknown, init?: { path?: string; headers?: Record<string, string> }): Promise<Response>;
  /** POST and parse the JSON answer. */
  rpc(body: unknown, init?: { path?: string; headers?: Record<string, string> }): Promise<{ status: number; headers: Headers; body: any }>;
  close(): Promise<void>;
}

/** Boots `module` on a real socket (127.0.0.1, port 0), the way users run it. */
export async function startTestApp(
  module: Type<unknown>,
  configure?: (app: NestFastifyApplication) => void | Promise<void>,
): Promise<TestApp> {
  const logger = new CapturingLogger();
  const app = await NestFactory.create<NestFastifyApplication>(module, new FastifyAdapter(), { logger });
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
