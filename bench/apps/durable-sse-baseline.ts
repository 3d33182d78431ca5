/**
 * Memory baseline for the `durable` workload: bare Fastify holding idle SSE responses
 * (`GET /sse` writes a `retry:` frame and nothing more), with the same `/__mem` probe.
 */
import Fastify from 'fastify';

const app = Fastify();
app.get('/sse', (_request, reply) => {
  reply.hijack();
  reply.raw.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  reply.raw.write('retry: 3000\n\n');
});
app.get('/__mem', async () => {
  (globalThis as { gc?: () => void }).gc?.();
  await new Promise((resolve) => setTimeout(resolve, 50));
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage();
});
await app.listen({ port: 0, host: '127.0.0.1' });
console.log(`LISTENING ${(app.server.address() as { port: number }).port}`);
