/**
 * Baseline of the `guarded` workload: a bare Fastify JSON-RPC dispatch of the same method — parse,
 * look the method up, call it, write the envelope. No roles, limits or cache.
 */
import Fastify from 'fastify';
import { quote } from './guarded-method.js';

const methods = new Map<string, (params: any) => unknown>([['catalog.quote', quote]]);
const app = Fastify();
app.post('/rpc', async (request, reply) => {
  const body = request.body as { method?: string; params?: unknown; id?: unknown };
  const handler = methods.get(String(body.method));
  reply.header('content-type', 'application/json; charset=utf-8');
  if (!handler) return JSON.stringify({ jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id: body.id ?? null });
  return JSON.stringify({ jsonrpc: '2.0', result: handler(body.params), id: body.id ?? null });
});
await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
console.log(`listening ${(app.server.address() as { port: number }).port}`);
