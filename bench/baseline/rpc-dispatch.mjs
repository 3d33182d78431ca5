/**
 * The hand-written JSON-RPC dispatch of `echo` and `add` that every baseline of the spine
 * workloads runs (bare Fastify, the raw routes on a Nest app's own Fastify or Express instance,
 * the plain Nest `@Controller`): what someone would write without the module. One copy, so every
 * baseline does exactly the same JSON-RPC work and differs only in what carries it.
 */
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

/** The answer to a parsed body: a payload to send as JSON, or `undefined` for 204 (notifications only). */
export function answer(body) {
  if (Array.isArray(body)) {
    const out = body.map(dispatch).filter((r) => r !== undefined);
    return out.length ? out : undefined;
  }
  return dispatch(body);
}
