/** jest 30 in ESM mode (Nest 12 ships ES modules); TypeScript through @swc/jest with decorator metadata. */
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

/** One project's configuration; the platform projects below differ in which suites run and on what. */
const project = {
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
    '^@nest-jsonrpc/server/terminus$': '<rootDir>/libs/server/src/terminus/index.ts',
    '^@nest-jsonrpc/server/testing$': '<rootDir>/libs/server/src/testing/index.ts',
    '^@nest-jsonrpc/client$': '<rootDir>/libs/client/src/index.ts',
    '^@nest-jsonrpc/llm$': '<rootDir>/libs/llm/src/index.ts',
    '^@nest-jsonrpc/codegen$': '<rootDir>/libs/codegen/src/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
    // ESM-only, required by the devkit's install-task executor, which schematic tests never run.
    '^ora$': '<rootDir>/test/schematics/support/devkit-ora.cjs',
  },
  testMatch: ['<rootDir>/libs/*/src/**/*.spec.ts', '<rootDir>/test/**/*.spec.ts', '<rootDir>/test/**/*.e2e-spec.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  setupFiles: ['reflect-metadata', '<rootDir>/test/support/nest-esm-for-cjs.setup.ts'],
};

/**
 * The end-to-end suites of the HTTP edge, run once per platform: every route, its refusals, bodies,
 * streams, durable attaches, MCP, observability, roles and limits, the 413 delivery, the fuzz
 * properties, slow clients and shutdown. The other suites (units, the LLM loop, the schematics, the
 * pack test) do not depend on the platform and run once, in the Fastify project.
 */
const EDGE_SUITES = ['spine', 'streaming', 'durable', 'hardening', 'fuzz', 'mcp', 'openrpc', 'observability', 'security', 'client', 'crash', 'schema', 'testing'].map(
  (folder) => `<rootDir>/test/${folder}/**/*.e2e-spec.ts`,
);

/** Suites of what only one platform has (its own instrumentation, Fastify's HTTP/2): each runs in its platform's project only. */
const ONLY_ON = {
  fastify: ['<rootDir>/test/observability/fastify-otel.e2e-spec.ts', '<rootDir>/test/hardening/fastify-http2.e2e-spec.ts'],
  express: ['<rootDir>/test/observability/express-otel.e2e-spec.ts'],
};

export default {
  testTimeout: 30000,
  reporters: ['default', '<rootDir>/test/support/summary-reporter.mjs'],
  projects: [
    { ...project, displayName: 'fastify', testPathIgnorePatterns: [...project.testPathIgnorePatterns, ...ONLY_ON.express] },
    // The test apps read the platform from this global (test/support/rpc-test-app.ts).
    {
      ...project,
      displayName: 'express',
      testMatch: EDGE_SUITES,
      testPathIgnorePatterns: [...project.testPathIgnorePatterns, ...ONLY_ON.fastify],
      globals: { RPC_TEST_PLATFORM: 'express' },
    },
  ],
};
