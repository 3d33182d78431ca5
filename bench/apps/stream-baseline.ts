/**
 * Bench baseline: a bare Fastify route streaming the same NDJSON rows, one `write()` per row, with
 * the usual 'drain' handling. Prints `ready <port>` once listening.
 */
import Fastify from 'fastify';
import { once } from 'node:events';

const app = Fastify();
app.removeAllContentTypeParsers();
app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => done(null, body));

app.post('/stream', async (request, reply) => {
  const { params } = JSON.parse(request.body as string) as { params: { n: number } };
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-cache' });
  for (let i = 0; i < params.n; i++) {
    if (res.destroyed) return;
    if (!res.write(JSON.stringify({ i, delta: 'token' }) + '\n')) await once(res, 'drain');
  }
  res.end();
});

await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
console.log(`ready ${(app.server.address() as { port: number }).port}`);
