/**
 * The baseline: bare Fastify 5 with the hand-written JSON-RPC dispatch of rpc-dispatch.mjs —
 * what someone would write without the module. Fastify's own JSON parser and serializer.
 */
import Fastify from 'fastify';
import { answer } from './rpc-dispatch.mjs';

const app = Fastify({ logger: false, bodyLimit: 2 * 1024 * 1024 });
app.post('/rpc', (req, reply) => {
  const out = answer(req.body);
  return out === undefined ? reply.code(204).send() : reply.send(out);
});
await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
process.send?.({ port: app.server.address().port });
