/** Options of the `nest-add` schematic (see schema.json, which the engine validates them against). */
export interface NestAddOptions {
  sourceRoot?: string;
  path?: string;
  stream: boolean;
  durable: boolean;
  project?: string;
}
