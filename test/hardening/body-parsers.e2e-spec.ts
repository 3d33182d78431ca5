/**
 * The module reads its routes' bodies itself, whatever body parsers the app runs: Nest's global
 * one (on Express, `express.json()` and `express.urlencoded()` unless `bodyParser: false`), one
 * configured with `app.useBodyParser()`, Express parsers the app mounts itself, `rawBody: true`.
 * With each: bad JSON is -32700 (never the parser's 400), a body over the app parser's own limit
 * but under `maxRequestSize` is served, params reach the handler, a media type the module does
 * not read is 415, the 413 carries the CORS headers of the app's middleware — and the app's own
 * controllers still get their parsed bodies. On Express, a parser the module cannot run before
 * (wrapped in the app's own function, or applied by a Nest middleware consumer to every route) is
 * never a silent empty body: what it parsed is served, or 500 when it kept nothing, and the log
 * says what to change.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Body, Controller, Injectable, Module, Post, type INestApplication, type MiddlewareConsumer, type NestApplicationOptions, type NestModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import express from 'express';
import { JsonRpcModule, RpcMethod } from '@nest-jsonrpc/server';
import { CapturingLogger, TEST_PLATFORM, testAdapter, type TestPlatform } from '../support/rpc-test-app.js';

@Injectable()
class EchoMethods {
  @RpcMethod('echo')
  echo(params: unknown) {
    return params ?? null;
  }
}

@Controller('app')
class AppController {
  @Post('echo')
  echo(@Body() body: unknown) {
    return { body: body ?? null };
  }
}

@Module({ imports: [JsonRpcModule.forRoot()], providers: [EchoMethods], controllers: [AppController] })
class ParsersModule {}

interface Setup {
  readonly label: string;
  readonly options?: NestApplicationOptions;
  readonly configure?: (app: INestApplication) => void;
  /** Whether the app's controller gets a parsed JSON body (false: the app parses none). */
  readonly appParsesJson: boolean;
}

/** `app.useBodyParser()`, on either platform's application type. */
const useBodyParser = (app: INestApplication, type: string, options: object) => (app as never as { useBodyParser(type: string, options: object): void }).useBodyParser(type, options);

const SETUPS: Record<TestPlatform, readonly Setup[]> = {
  express: [
    { label: "Nest's global body parser (the default)", appParsesJson: true },
    { label: 'bodyParser: false', options: { bodyParser: false }, appParsesJson: false },
    { label: "app.useBodyParser('json', { limit: '1kb' })", configure: (app) => useBodyParser(app, 'json', { limit: '1kb' }), appParsesJson: true },
    {
      label: 'express.json() and express.urlencoded() mounted by the app',
      options: { bodyParser: false },
      configure: (app) => {
        app.use(express.json({ limit: '1kb' }));
        app.use(express.urlencoded({ extended: false }));
      },
      appParsesJson: true,
    },
    { label: 'rawBody: true', options: { rawBody: true }, appParsesJson: true },
  ],
  fastify: [
    { label: "Fastify's own JSON parser (the default)", appParsesJson: true },
    { label: "app.useBodyParser('application/json', { bodyLimit: 1024 })", configure: (app) => useBodyParser(app, 'application/json', { bodyLimit: 1024 }), appParsesJson: true },
    { label: 'rawBody: true', options: { rawBody: true }, appParsesJson: true },
    {
      // The module's parser resumes a request paused before it, as Fastify's own reader (which it
      // replaces on /rpc) does. (On Express the app's own parsers would not: raw-body never resumes.)
      label: 'an onRequest hook that pauses the request',
      configure: (app) =>
        (app.getHttpAdapter().getInstance() as { addHook: (name: 'onRequest', hook: (req: { raw: { pause: () => void } }, reply: unknown, done: () => void) => void) => void }).addHook(
          'onRequest',
          (req, _reply, done) => (req.raw.pause(), done()),
        ),
      appParsesJson: true,
    },
  ],
};

async function start(setup: Setup): Promise<{ url: string; logger: CapturingLogger; close: () => Promise<void> }> {
  const logger = new CapturingLogger();
  const app = await NestFactory.create<INestApplication>(ParsersModule, testAdapter(), { logger, ...setup.options });
  app.enableCors({ origin: true });
  setup.configure?.(app);
  await app.listen(0, '127.0.0.1');
  return { url: `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`, logger, close: () => app.close() };
}

const post = (url: string, body: string, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

describe.each(SETUPS[TEST_PLATFORM].map((setup) => [setup.label, setup] as const))('the module reads its own bodies, with %s', (_label, setup) => {
  let t: Awaited<ReturnType<typeof start>>;
  beforeAll(async () => {
    t = await start(setup);
  });
  afterAll(() => t.close());

  it('bad JSON is -32700, with status 200', async () => {
    const res = await post(`${t.url}/rpc`, '{"jsonrpc":');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null });
  });

  it("a body over the app parser's limit but under maxRequestSize is served, params intact", async () => {
    const text = 'x'.repeat(200_000);
    const res = await post(`${t.url}/rpc`, JSON.stringify({ jsonrpc: '2.0', method: 'echo', params: { text }, id: 1 }));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ jsonrpc: '2.0', result: { text }, id: 1 });
  });

  it('a media type the module does not read is 415, whatever the app parses', async () => {
    const form = await post(`${t.url}/rpc`, 'a=1', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(form.status).toBe(415);
    expect(await form.json()).toEqual({ jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request: Content-Type must be application/json' }, id: null });
  });

  it("a 413 carries the CORS headers of the app's middleware", async () => {
    const res = await post(`${t.url}/rpc`, 'x'.repeat(1_100_000), { origin: 'http://localhost:5173' });
    expect(res.status).toBe(413);
    expect(res.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    expect((await res.json()).error).toEqual({ code: -32600, message: 'Invalid Request: body exceeds 1048576 bytes' });
  });

  it("the app's own controllers still get their parsed bodies", async () => {
    const res = await post(`${t.url}/app/echo`, '{"a":1}');
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ body: setup.appParsesJson ? { a: 1 } : null });
  });
});

/** A body parser wrapped in a Nest middleware, applied to every route: the module cannot run first. */
@Injectable()
class EveryRouteJsonParser {
  private readonly parse = express.json();
  use(req: IncomingMessage, res: ServerResponse, next: () => void) {
    this.parse(req as never, res as never, next);
  }
}

/** A middleware that reads every body and keeps nothing of it. */
@Injectable()
class EveryRouteBodyDrain {
  use(req: IncomingMessage, _res: ServerResponse, next: () => void) {
    req.on('end', () => next()).resume();
  }
}

@Module({ imports: [JsonRpcModule.forRoot()], providers: [EchoMethods] })
class ConsumerParserModule implements NestModule {
  configure(consumer: MiddlewareConsumer) {
    consumer.apply(EveryRouteJsonParser).forRoutes('{*path}');
  }
}

@Module({ imports: [JsonRpcModule.forRoot()], providers: [EchoMethods] })
class ConsumerDrainModule implements NestModule {
  configure(consumer: MiddlewareConsumer) {
    consumer.apply(EveryRouteBodyDrain).forRoutes('{*path}');
  }
}

const ECHO_CALL = JSON.stringify({ jsonrpc: '2.0', method: 'echo', params: { a: 1 }, id: 1 });
const WHAT_TO_CHANGE = 'The body of POST /rpc was read before JsonRpcModule could read it, by a body parser the module does not recognise';

async function listen(module: object, options: NestApplicationOptions, configure?: (app: INestApplication) => void) {
  const logger = new CapturingLogger();
  const app = await NestFactory.create<INestApplication>(module as never, testAdapter(), { logger, ...options });
  configure?.(app);
  await app.listen(0, '127.0.0.1');
  return { app, logger, url: `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}` };
}

/** Calls echo twice with the same answer each time; the warnings logged, which must be one (said once, not per call). */
async function callTwice(url: string, logger: CapturingLogger, status: number, answer: unknown): Promise<string[]> {
  for (let i = 0; i < 2; i++) {
    const res = await post(`${url}/rpc`, ECHO_CALL);
    expect([res.status, await res.json()]).toEqual([status, answer]);
  }
  const warnings = logger.lines.filter((line) => line.level === 'warn').map((line) => line.message);
  expect(warnings).toHaveLength(1);
  return warnings;
}

// Express only: on Fastify, Nest middleware sees the Node request, and the module's routes read
// their bodies through their own content-type parser, which nothing runs before.
if (TEST_PLATFORM === 'express') {
  describe('on Express, a body read before the module could', () => {
    it("by a parser a Nest middleware consumer applies to every route: served from the parser's req.body, params intact, and the log says what to change, once", async () => {
      // No parser the module recognises in the app's stack (so nothing to claim bodies before): only the consumer's.
      const { app, logger, url } = await listen(ConsumerParserModule, { bodyParser: false });
      try {
        const warnings = await callTwice(url, logger, 200, { jsonrpc: '2.0', result: { a: 1 }, id: 1 });
        expect(warnings[0]).toContain(WHAT_TO_CHANGE);
        expect(warnings[0]).toContain("the module serves what it left on req.body: that parser's size limit and error answers apply");
        expect(warnings[0]).toContain('MiddlewareConsumer.exclude()');
      } finally {
        await app.close();
      }
    });

    it("by express.json() wrapped in the app's own function before Nest's parser (a webhook-skipping wrapper): served, and the parser's own refusals apply", async () => {
      const { app, logger, url } = await listen(ParsersModule, {}, (nest) =>
        nest.use((req: IncomingMessage & { originalUrl: string }, res: ServerResponse, next: () => void) =>
          req.originalUrl === '/webhook' ? next() : express.json()(req as never, res as never, next),
        ),
      );
      try {
        const res = await post(`${url}/rpc`, ECHO_CALL);
        expect([res.status, await res.json()]).toEqual([200, { jsonrpc: '2.0', result: { a: 1 }, id: 1 }]);
        const batch = await post(`${url}/rpc`, JSON.stringify([{ jsonrpc: '2.0', method: 'echo', params: [1], id: 1 }, { jsonrpc: '2.0', method: 'echo', params: [2] }]));
        expect(await batch.json()).toEqual([{ jsonrpc: '2.0', result: [1], id: 1 }]);
        // The module's parser rules still hold on what it is handed: no prototype keys reach params.
        const polluted = await post(`${url}/rpc`, '{"jsonrpc":"2.0","method":"echo","params":{"__proto__":{"x":1},"a":1},"id":2}');
        expect(await polluted.json()).toEqual({ jsonrpc: '2.0', result: { a: 1 }, id: 2 });
        // Bad JSON is the wrapped parser's to refuse (Express's 400), as the log says.
        expect((await post(`${url}/rpc`, '{')).status).toBe(400);
        expect(logger.lines.filter((line) => line.level === 'warn' && line.message.includes(WHAT_TO_CHANGE))).toHaveLength(1);
      } finally {
        await app.close();
      }
    });

    it('by a middleware that keeps nothing of it: answered 500 (never empty params), and the log says what to change, once', async () => {
      const { app, logger, url } = await listen(ConsumerDrainModule, { bodyParser: false });
      try {
        const warnings = await callTwice(url, logger, 500, { jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null });
        expect(warnings[0]).toContain(WHAT_TO_CHANGE);
        expect(warnings[0]).toContain('left nothing the module can serve, so the request was answered 500 (never with empty params)');
      } finally {
        await app.close();
      }
    });
  });
}
