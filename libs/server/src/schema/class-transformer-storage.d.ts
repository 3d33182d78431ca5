// class-transformer 0.5 ships no typings for its storage module; the instance is the one
// `plainToInstance` reads (Node resolves the package's `main`, the CommonJS build).
declare module 'class-transformer/cjs/storage.js' {
  import type { MetadataStorage } from 'class-transformer/types/MetadataStorage.js';
  export const defaultMetadataStorage: MetadataStorage;
}
