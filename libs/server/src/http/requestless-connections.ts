import type { Server } from 'node:http';
import type { Socket } from 'node:net';

const TRACKED = Symbol.for('nest-jsonrpc.requestless-connections');

/**
 * Closing the server does not wait for connections that never sent a request.
 *
 * Node counts a fresh connection as busy until its first request arrives or `headersTimeout`
 * (60 s, checked every 30 s) expires it, so `server.close()` — and with it Nest's `app.close()`
 * and a SIGTERM'd process — waits up to a minute for a socket that will never carry anything.
 * Browsers open such sockets on purpose (preconnect), and so do HTTP clients whose pool dialled
 * one more connection than it ended up using. Fastify's `forceCloseConnections: 'idle'` (the
 * default) and Node's `closeIdleConnections()` close only sockets between two requests; the
 * returned function closes the rest of the requestless ones, and the platform adapter calls it
 * when the server starts closing. Connections with a response in progress finish as before.
 *
 * The test for "a response in progress" is Node's own in `closeIdleConnections`: the socket's
 * current `_httpMessage` (the response it is writing), unset before the first request and again
 * once each response has finished. Cost: one listener per connection, nothing per request.
 *
 * Undefined when the server is not an HTTP/1 one (http2 sessions have no `_httpMessage`), or is
 * tracked already (once per server).
 */
export function trackRequestlessConnections(server: Server): (() => void) | undefined {
  const marked = server as Server & { [TRACKED]?: true };
  if (marked[TRACKED] || typeof server.closeIdleConnections !== 'function') return undefined;
  marked[TRACKED] = true;
  const open = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  });
  return () => {
    for (const socket of open) {
      if (!(socket as Socket & { _httpMessage?: unknown })._httpMessage) socket.destroy();
    }
  };
}
