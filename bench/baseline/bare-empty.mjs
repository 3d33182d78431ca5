/** Bare Fastify 5 answering 204 to POST /rpc: the other half of nest-empty.mjs. */
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.post('/rpc', (_request, reply) => {
  reply.code(204).send();
});
await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
process.send?.({ port: app.server.address().port });
