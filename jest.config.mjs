/** jest 30 in ESM mode (Nest 12 is ESM-only); TypeScript through @swc/jest with decorator metadata. */
const swc = [
  '@swc/jest',
  {
    jsc: {
      target: 'es2022',
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
      keepClassNames: true,
    },
    module: { type: 'es6' },
    sourceMaps: 'inline',
  },
];

export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': swc,
    // CommonJS packages that require Nest (ESM only): see test/support/nest-esm-for-cjs.setup.ts.
    '/node_modules/@nestjs/throttler/.+\\.js$': '<rootDir>/test/support/cjs-requires-nest.transform.cjs',
  },
  transformIgnorePatterns: ['/node_modules/(?!@nestjs/throttler/)'],
  moduleNameMapper: {
    '^@nest-jsonrpc/protocol$': '<rootDir>/libs/protocol/src/index.ts',
    '^@nest-jsonrpc/server$': '<rootDir>/libs/server/src/index.ts',
    '^@nest-jsonrpc/client$': '<rootDir>/libs/client/src/index.ts',
    '^@nest-jsonrpc/llm$': '<rootDir>/libs/llm/src/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
    // ESM-only, required by the devkit's install-task executor, which schematic tests never run.
    '^ora$': '<rootDir>/test/schematics/support/devkit-ora.cjs',
  },
  testMatch: ['<rootDir>/libs/*/src/**/*.spec.ts', '<rootDir>/test/**/*.spec.ts', '<rootDir>/test/**/*.e2e-spec.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  setupFiles: ['reflect-metadata', '<rootDir>/test/support/nest-esm-for-cjs.setup.ts'],
  testTimeout: 30000,
  reporters: ['default', '<rootDir>/test/support/summary-reporter.mjs'],
};
