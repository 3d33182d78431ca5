/**
 * Bench baseline: a bare Fastify route piping the fake provider's SSE body (UPSTREAM_URL) to the
 * client byte for byte — no parsing, no re-encoding — with the usual 'drain' handling and the
 * upstream request aborted when the client leaves. Reports its port over IPC.
 */
import Fastify from 'fastify';
import { once } from 'node:events';

const upstream = `${process.env.UPSTREAM_URL}/v1/chat/completions`;
const app = Fastify();

app.post('/relay', async (request, reply) => {
  const { model } = request.body as { model: string };
  const controller = new AbortController();
  const answer = await fetch(upstream, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer bench' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'go' }], stream: true }),
    signal: controller.signal,
  });
  reply.hijack();
  const res = reply.raw;
  res.once('close', () => controller.abort());
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  try {
    for await (const chunk of answer.body as unknown as AsyncIterable<Uint8Array>) {
      if (!res.write(chunk)) await once(res, 'drain');
    }
  } catch {
    // The client left: the upstream request was aborted.
  }
  res.end();
});

await app.listen({ port: 0, host: '127.0.0.1' });
process.send?.({ port: (app.server.address() as { port: number }).port });
// The workload asks for this process's CPU time to report the CPU each relayed token costs.
process.on('message', (message) => {
  if (message === 'cpu') process.send?.({ cpu: process.cpuUsage() });
});
