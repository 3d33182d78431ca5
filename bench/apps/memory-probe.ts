/** The `/__mem` probe the memory figures read: memory after two forced GCs (node --expose-gc). */
import type { FastifyInstance } from 'fastify';

export function addMemoryProbe(fastify: FastifyInstance): void {
  fastify.get('/__mem', async () => {
    (globalThis as { gc?: () => void }).gc?.();
    await new Promise((resolve) => setTimeout(resolve, 50));
    (globalThis as { gc?: () => void }).gc?.();
    return process.memoryUsage();
  });
}
