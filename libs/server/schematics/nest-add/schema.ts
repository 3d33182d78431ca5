/** Options of the `nest-add` schematic (see schema.json, which the engine validates them against). */
export interface NestAddOptions {
  sourceRoot?: string;
  path?: string;
  stream: boolean;
  durable: boolean;
  /** The platform the app should run on; none: the one main.ts creates it on (Express by default). */
  platform?: 'fastify' | 'express';
  project?: string;
}
