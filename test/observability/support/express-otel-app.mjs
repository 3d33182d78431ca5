/**
 * A Nest Express app with the module (the built package), run as a child process under
 * `express-otel-register.mjs`, so the Express and HTTP instrumentations patch the real `express`
 * as they do in an app (they cannot inside jest's module system). Prints `LISTENING <port>`; on a
 * `spans` line on stdin, prints the finished spans as one JSON line.
 */
import 'reflect-metadata';
import { createInterface } from 'node:readline';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { JsonRpcModule, RpcCtx, RpcMethod, RpcStream, StreamFormat } from '@nest-jsonrpc/server';

class Methods {
  add(params) {
    return params.a + params.b;
  }

  async *count(params) {
    for (let i = 1; i <= params.n; i++) yield { i };
  }

  /** One row, then nothing until the client leaves (its signal aborts). */
  async *held(ctx) {
    yield { i: 1 };
    await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
  }
}
RpcMethod('add')(Methods.prototype, 'add', Object.getOwnPropertyDescriptor(Methods.prototype, 'add'));
RpcMethod('count')(Methods.prototype, 'count', Object.getOwnPropertyDescriptor(Methods.prototype, 'count'));
RpcStream({ format: StreamFormat.Ndjson })(Methods.prototype, 'count', Object.getOwnPropertyDescriptor(Methods.prototype, 'count'));
RpcMethod('held')(Methods.prototype, 'held', Object.getOwnPropertyDescriptor(Methods.prototype, 'held'));
RpcStream({ format: StreamFormat.Sse })(Methods.prototype, 'held', Object.getOwnPropertyDescriptor(Methods.prototype, 'held'));
RpcCtx()(Methods.prototype, 'held', 0);
Injectable()(Methods);

class App {}
Module({ imports: [JsonRpcModule.forRoot({ stream: { enabled: true } })], providers: [Methods] })(App);

const app = await NestFactory.create(App, new ExpressAdapter(), { logger: false });
await app.listen(0, '127.0.0.1');
console.log(`LISTENING ${app.getHttpServer().address().port}`);
createInterface({ input: process.stdin }).on('line', (line) => {
  if (line !== 'spans') return;
  const spans = globalThis.finishedSpans().map((s) => ({
    name: s.name,
    kind: s.kind,
    scope: s.instrumentationScope.name,
    traceId: s.spanContext().traceId,
    spanId: s.spanContext().spanId,
    parentId: s.parentSpanContext?.spanId,
    attributes: s.attributes,
    status: s.status,
  }));
  console.log(JSON.stringify(spans));
});
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
