/**
 * The baseline: bare Fastify 5 with a hand-written JSON-RPC dispatch of `echo` and `add` —
 * what someone would write without the module. Fastify's own JSON parser and serializer.
 */
import Fastify from 'fastify';

const methods = {
  echo: (params) => params,
  add: (params) => (Array.isArray(params) ? params[0] + params[1] : params.a + params.b),
};

function dispatch(request) {
  if (!request || request.jsonrpc !== '2.0' || typeof request.method !== 'string') {
    return { jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request' }, id: null };
  }
  const fn = methods[request.method];
  const isNotification = !('id' in request);
  if (!fn) return isNotification ? undefined : { jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id: request.id };
  const result = fn(request.params);
  return isNotification ? undefined : { jsonrpc: '2.0', result, id: request.id };
}

const app = Fastify({ logger: false, bodyLimit: 2 * 1024 * 1024 });
app.post('/rpc', (req, reply) => {
  const body = req.body;
  if (Array.isArray(body)) {
    const out = body.map(dispatch).filter((r) => r !== undefined);
    return out.length ? reply.send(out) : reply.code(204).send();
  }
  const out = dispatch(body);
  return out === undefined ? reply.code(204).send() : reply.send(out);
});
await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
process.send?.({ port: app.server.address().port });
