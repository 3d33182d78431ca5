import { createServer } from 'node:net';

/** A 127.0.0.1 URL on a port that was just free: connecting to it is refused (ECONNREFUSED). */
export async function refusedUrl(path: string): Promise<string> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return `http://127.0.0.1:${port}${path}`;
}

/** The error `promise` rejects with; fails the test when it resolves instead. */
export function rejection(promise: Promise<unknown>): Promise<any> {
  return promise.then(
    (value) => {
      throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
    },
    (error: unknown) => error,
  );
}
