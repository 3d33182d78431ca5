/** Options of the `rpc` schematic (see schema.json, which the engine validates them against). */
export interface RpcOptions {
  name: string;
  path?: string;
  sourceRoot?: string;
  flat: boolean;
  spec: boolean;
  specFileSuffix: string;
  skipImport: boolean;
  type: 'method' | 'stream' | 'zod' | 'zod-stream';
  stream: boolean;
  schema: 'class-validator' | 'zod';
  language?: string;
  format?: boolean;
  collection?: string;
  project?: string;
}
