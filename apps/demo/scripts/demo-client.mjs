#!/usr/bin/env node
/**
 * `npm run demo:client`: the demo app's methods called through @nest-jsonrpc/client (the built
 * package, imported by its name as users do).
 *
 *   RPC_URL=http://127.0.0.1:3000/rpc npm run demo:client   # against a running `npm start`
 *   npm run demo:client                                     # boots the demo in-process if nothing answers
 */
import { JsonRpcClient, JsonRpcError, JsonRpcProtocolError, JsonRpcTransportError } from '@nest-jsonrpc/client';

const explicitUrl = process.env.RPC_URL ?? process.argv[2];
let url = explicitUrl ?? 'http://127.0.0.1:3000/rpc';
let app;

const print = (label, value) => console.log(`${label.padEnd(28)} ${typeof value === 'string' ? value : JSON.stringify(value)}`);

/** A streaming or durable method the demo may not have yet: say so instead of failing. */
function unavailable(error) {
  return (
    (error instanceof JsonRpcError && (error.code === -32601 || error.status === 404)) ||
    (error instanceof JsonRpcProtocolError && error.status === 404)
  );
}

async function bootDemoInProcess() {
  await import('reflect-metadata');
  const { NestFactory } = await import('@nestjs/core');
  const { FastifyAdapter } = await import('@nestjs/platform-fastify');
  const { AppModule } = await import('../dist/app.module.js');
  app = await NestFactory.create(AppModule, new FastifyAdapter(), { logger: ['error', 'warn'] });
  await app.listen(0, '127.0.0.1');
  url = `http://127.0.0.1:${app.getHttpServer().address().port}/rpc`;
  console.log(`(nothing answered on 127.0.0.1:3000: booted the demo in-process on ${url})`);
}

async function main() {
  let client = new JsonRpcClient({ url, timeoutMs: 5000 });
  try {
    print('math.add {a:2, b:3}', await client.call('math.add', { a: 2, b: 3 }));
  } catch (error) {
    if (explicitUrl !== undefined || !(error instanceof JsonRpcTransportError)) throw error;
    await bootDemoInProcess();
    client = new JsonRpcClient({ url, timeoutMs: 5000 });
    print('math.add {a:2, b:3}', await client.call('math.add', { a: 2, b: 3 }));
  }
  print('math.subtract [42, 23]', await client.call('math.subtract', [42, 23]));
  print('math.subtract named', await client.call('math.subtract', { minuend: 42, subtrahend: 23 }));

  try {
    await client.call('math.add', { a: 'two', b: 3 });
  } catch (error) {
    if (!(error instanceof JsonRpcError)) throw error;
    print('math.add {a:"two"} ->', { code: error.code, message: error.message, data: error.data });
  }

  const settled = await client.batch([
    { method: 'math.add', params: { a: 1, b: 1 } },
    { method: 'math.subtract', params: [10, 4] },
    { method: 'math.add', params: { a: 5, b: 5 }, notification: true },
    { method: 'no.such.method' },
  ]);
  print('batch', settled.map((s) => (s.status === 'fulfilled' ? s.value ?? '(notification)' : `${s.reason.code} ${s.reason.message}`)));

  try {
    process.stdout.write('chat.stream (tokens)'.padEnd(29));
    let finish;
    for await (const row of client.stream('chat.stream', { prompt: 'Hello from the client' })) {
      if (typeof row?.delta === 'string') process.stdout.write(row.delta);
      else finish = row.finish_reason; // the last row, {done: true, finish_reason}
    }
    process.stdout.write(`  [finish: ${finish}]\n`);
  } catch (error) {
    if (!unavailable(error)) throw error;
    console.log('(not available in this build of the demo: the streaming route has not landed)');
  }

  try {
    // NDJSON that never ends on its own: `break` closes the request and the server stops tailing.
    const lines = [];
    for await (const row of client.stream('logs.tail', { intervalMs: 50 })) {
      lines.push(`${row.seq} ${row.level}`);
      if (lines.length === 3) break;
    }
    print('logs.tail (first 3, break)', lines);
  } catch (error) {
    if (!unavailable(error)) throw error;
    print('logs.tail', '(not available in this build of the demo)');
  }

  try {
    // `size` is required by the demo method (DownloadDto); 100 KB in 16 KiB base64 chunks.
    const bytes = await client.stream('files.download', { size: 100_000, chunkSize: 16 * 1024 }).collectResult();
    // The demo file's byte i is (i * 31 + 7) & 0xff (downloadByte in the streaming demo).
    const intact = bytes.every((value, i) => value === ((i * 31 + 7) & 0xff));
    print('files.download', `${bytes.length} bytes reassembled from result_chunk rows, ${intact ? 'intact' : 'CORRUPT'}`);
    if (!intact) throw new Error('files.download: the reassembled bytes differ from the generated file');
  } catch (error) {
    if (!unavailable(error)) throw error;
    print('files.download', '(not available in this build of the demo)');
  }

  try {
    const started = await client.call('report.generate', { steps: 10, delayMs: 200 });
    print('report.generate', started);
    const seen = [];
    for await (const event of client.attach(started.stream_id)) {
      seen.push(`${event.id}:${event.event}`);
      if (seen.length === 3) break; // detach; the report keeps running
    }
    print('attach (first 3, detached)', seen);
    print('cancel', await client.cancel(started.stream_id));
  } catch (error) {
    if (!unavailable(error)) throw error;
    print('report.generate', '(not available in this build of the demo: durable streams have not landed)');
  }
}

main()
  .catch((error) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(async () => {
    if (!app) return;
    const closing = app.close();
    // A connection the server is still holding (e.g. one left by the attach we broke out of)
    // would keep close() waiting for the server's headersTimeout; this script is exiting anyway.
    app.getHttpServer().closeAllConnections();
    await closing;
  });
