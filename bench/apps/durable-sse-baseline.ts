/**
 * Memory baseline for the `durable` workload: bare Fastify holding idle SSE responses
 * (`GET /sse` writes a `retry:` frame and nothing more), with the same `/__mem` probe.
 */
import Fastify from 'fastify';
import { addMemoryProbe } from './memory-probe.js';

const app = Fastify();
app.get('/sse', (_request, reply) => {
  reply.hijack();
  reply.raw.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  reply.raw.write('retry: 3000\n\n');
});
addMemoryProbe(app);
await app.listen({ port: 0, host: '127.0.0.1' });
console.log(`LISTENING ${(app.server.address() as { port: number }).port}`);
