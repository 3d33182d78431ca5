/**
 * `nest add @nest-jsonrpc/server` (the `nest-add` schematic), on the app `nest new` writes today and
 * on the variations users have: what every file becomes — an Express app stays on Express, and
 * `--platform fastify` switches it — that a second run changes nothing, and that an app the
 * schematic cannot edit safely gets a clear message and keeps every file as it was.
 */
import type { SchematicTestRunner } from '@angular-devkit/schematics/testing';
import { MAIN_ON_FASTIFY, NEST_NEW_APP } from './fixtures/nest-new-app.js';
import { CJS_MAIN_ON_FASTIFY, NEST_NEW_CJS_APP } from './fixtures/nest-new-cjs-app.js';
import { JEST_COMMONJS_APP } from './fixtures/older-apps.js';
import { appTree, createRunner, run, snapshot } from './schematics-runner.js';

/** The options of `nest add @nest-jsonrpc/server --platform fastify`. */
const FASTIFY = { platform: 'fastify' };
/** What `--platform fastify` says of the Express packages it leaves in package.json. */
const KEPT_EXPRESS_NOTE =
  'warn: Note: package.json keeps @nestjs/platform-express and @types/express: other files may still use Express (FileInterceptor, Express.Multer.File), and removing a dependency is yours to decide; remove them once nothing imports them.';

let runner: SchematicTestRunner;
beforeAll(() => {
  runner = createRunner();
});

const APP_MODULE_WITH_JSON_RPC = `import { Module } from '@nestjs/common';
import { JsonRpcModule } from '@nest-jsonrpc/server';
import { AppController } from './app.controller.js';
import { AppService } from './app.service.js';

@Module({
  imports: [JsonRpcModule.forRoot()],
  controllers: [AppController],
  providers: [AppService],
})
export class AppModule {}
`;

describe('nest-add on the app `nest new` writes (@nestjs/cli 12): the app stays on Express', () => {
  it('leaves main.ts and the template e2e test as they are (Express, Nest’s default)', async () => {
    const { tree } = await run(runner, 'nest-add', {}, appTree());
    expect(tree.readText('src/main.ts')).toBe(NEST_NEW_APP['src/main.ts']);
    expect(tree.readText('test/app.e2e-spec.ts')).toBe(NEST_NEW_APP['test/app.e2e-spec.ts']);
  });

  it('imports JsonRpcModule.forRoot() into the root module', async () => {
    const { tree } = await run(runner, 'nest-add', {}, appTree());
    expect(tree.readText('src/app.module.ts')).toBe(APP_MODULE_WITH_JSON_RPC);
  });

  it('adds the package, its required peers and Express itself to dependencies, in order, and schedules one install', async () => {
    const { tree, tasks } = await run(runner, 'nest-add', {}, appTree());
    const pkg = JSON.parse(tree.readText('package.json'));
    expect(pkg.dependencies).toEqual({
      '@nest-jsonrpc/server': '^0.1.0',
      '@nestjs/common': '^12.0.1',
      '@nestjs/core': '^12.0.1',
      '@nestjs/platform-express': '^12.0.1',
      '@nestjs/throttler': '^6.5.0',
      'class-transformer': '^0.5.1',
      'class-validator': '^0.15.0',
      express: '^5.0.0',
      'reflect-metadata': '^0.2.2',
      rxjs: '^7.8.1',
    });
    expect(Object.keys(pkg.dependencies)).toEqual(Object.keys(pkg.dependencies).sort());
    // The rest of the file is left as it was, byte for byte.
    const original = JSON.parse(NEST_NEW_APP['package.json']);
    expect({ ...pkg, dependencies: original.dependencies }).toEqual(original);
    expect(tasks).toEqual(['node-package']);
  });

  it('makes nest-cli.json use this collection, which extends @nestjs/schematics', async () => {
    const { tree } = await run(runner, 'nest-add', {}, appTree());
    expect(JSON.parse(tree.readText('nest-cli.json'))).toEqual({ ...JSON.parse(NEST_NEW_APP['nest-cli.json']), collection: '@nest-jsonrpc/server' });
    const service = await runner.runSchematic('service', { name: 'greeting', sourceRoot: 'src' }, tree);
    expect(service.readText('src/greeting/greeting.service.ts')).toContain('export class GreetingService {}');
    expect(service.readText('src/app.module.ts')).toContain('providers: [AppService, GreetingService]');
  });

  it('changes package.json, the root module and nest-cli.json only', async () => {
    const before = snapshot(appTree());
    const { tree } = await run(runner, 'nest-add', {}, appTree());
    const after = snapshot(tree);
    const changed = Object.keys(after).filter((path) => after[path] !== before[path]);
    expect(changed.sort()).toEqual(['/nest-cli.json', '/package.json', '/src/app.module.ts']);
  });

  it('prints what it changed, then what to do next', async () => {
    const { logs } = await run(runner, 'nest-add', {}, appTree());
    expect(logs).toEqual([
      [
        'info: @nest-jsonrpc/server is set up:',
        '  - package.json: added @nest-jsonrpc/server@^0.1.0, @nestjs/throttler@^6.5.0, class-transformer@^0.5.1, class-validator@^0.15.0, express@^5.0.0',
        '  - src/app.module.ts: imports JsonRpcModule.forRoot()',
        '  - nest-cli.json: collection is @nest-jsonrpc/server (it extends @nestjs/schematics, so every `nest g` schematic still works, and `nest g rpc` needs no -c)',
        'Next:',
        '  nest g rpc hello              # a method, its DTOs and a spec that calls it over HTTP',
        '  nest g rpc feed --type stream # a streaming method',
      ].join('\n'),
    ]);
  });

  it('changes nothing the second time, and installs nothing', async () => {
    const first = await run(runner, 'nest-add', {}, appTree());
    const before = snapshot(first.tree);
    const second = await run(runner, 'nest-add', {}, first.tree);
    expect(snapshot(second.tree)).toEqual(before);
    expect(second.tasks).toEqual([]);
    // Nothing to change, and no "Next:" naming methods that may exist already.
    expect(second.logs[0]).toBe('info: @nest-jsonrpc/server is set up already: nothing to change.');
  });
});

describe('nest-add --platform fastify on the app `nest new` writes (@nestjs/cli 12): switched to Fastify', () => {
  it('switches main.ts to Fastify, keeping its other lines', async () => {
    const { tree } = await run(runner, 'nest-add', FASTIFY, appTree());
    expect(tree.readText('src/main.ts')).toBe(MAIN_ON_FASTIFY);
  });

  it('adds the package and its required peers to dependencies, in order, and schedules one install', async () => {
    const { tree, tasks } = await run(runner, 'nest-add', FASTIFY, appTree());
    const pkg = JSON.parse(tree.readText('package.json'));
    expect(pkg.dependencies).toEqual({
      '@nest-jsonrpc/server': '^0.1.0',
      '@nestjs/common': '^12.0.1',
      '@nestjs/core': '^12.0.1',
      '@nestjs/platform-express': '^12.0.1',
      '@nestjs/platform-fastify': '^12.0.1',
      '@nestjs/throttler': '^6.5.0',
      'class-transformer': '^0.5.1',
      'class-validator': '^0.15.0',
      fastify: '^5.0.0',
      'reflect-metadata': '^0.2.2',
      rxjs: '^7.8.1',
    });
    expect(Object.keys(pkg.dependencies)).toEqual(Object.keys(pkg.dependencies).sort());
    // The rest of the file is left as it was, byte for byte.
    const original = JSON.parse(NEST_NEW_APP['package.json']);
    expect({ ...pkg, dependencies: original.dependencies }).toEqual(original);
    expect(tree.readText('package.json')).toContain('\n    "@nestjs/platform-fastify": "^12.0.1",\n');
    expect(tasks).toEqual(['node-package']);
  });

  it('gives the template e2e test a Fastify app that is ready before supertest calls it', async () => {
    const { tree } = await run(runner, 'nest-add', FASTIFY, appTree());
    expect(tree.readText('test/app.e2e-spec.ts')).toBe(
      NEST_NEW_APP['test/app.e2e-spec.ts']
        .replace("import { App } from 'supertest/types.js';\n", "import { App } from 'supertest/types.js';\nimport { FastifyAdapter } from '@nestjs/platform-fastify';\n")
        .replace(
          'app = moduleFixture.createNestApplication();\n    await app.init();\n',
          'app = moduleFixture.createNestApplication(new FastifyAdapter());\n    await app.init();\n    await app.getHttpAdapter().getInstance().ready();\n',
        ),
    );
  });

  it('switches the specs `nest g rpc` wrote while the app was on Express, types, import and all', async () => {
    const onExpress = (await run(runner, 'nest-add', {}, appTree())).tree;
    const generated = (await run(runner, 'rpc', { flat: false, spec: true, specFileSuffix: 'spec', skipImport: false, name: 'hello', sourceRoot: 'src' }, onExpress)).tree;
    const before = generated.readText('src/hello/hello.rpc.spec.ts');
    const { tree, logs } = await run(runner, 'nest-add', FASTIFY, generated);
    expect(tree.readText('src/hello/hello.rpc.spec.ts')).toBe(
      before
        .replace("import type { NestExpressApplication } from '@nestjs/platform-express';\n", '')
        .replace(
          "import { afterAll, beforeAll, describe, expect, it } from 'vitest';\n",
          "import { afterAll, beforeAll, describe, expect, it } from 'vitest';\nimport { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';\n",
        )
        .replace('let app: NestExpressApplication;', 'let app: NestFastifyApplication;')
        // createRpcTestClient listens, so Fastify is ready: no ready() line is added.
        .replace('createNestApplication<NestExpressApplication>({', 'createNestApplication<NestFastifyApplication>(new FastifyAdapter(), {'),
    );
    expect(logs[0].split('\n')).toContain('  - src/hello/hello.rpc.spec.ts: createNestApplication() now gets a FastifyAdapter');
  });

  it('leaves a testing app given an adapter it cannot read as it is, and says so', async () => {
    const spec = "import { Test } from '@nestjs/testing';\n\nit('boots', async () => {\n  const moduleRef = await Test.createTestingModule({}).compile();\n  const app = moduleRef.createNestApplication(adapter);\n  await app.init();\n});\n";
    const { tree, logs } = await run(runner, 'nest-add', FASTIFY, appTree({ 'test/custom.e2e-spec.ts': spec }));
    expect(tree.readText('test/custom.e2e-spec.ts')).toBe(spec);
    expect(logs).toContain("warn: Note: test/custom.e2e-spec.ts line 5: createNestApplication() is given an adapter this schematic cannot tell apart from Express's: give it `new FastifyAdapter()` by hand.");
  });

  it('leaves tsconfig.json and the other files alone (decorator metadata and ESM are on already)', async () => {
    const before = snapshot(appTree());
    const { tree } = await run(runner, 'nest-add', FASTIFY, appTree());
    const after = snapshot(tree);
    const changed = Object.keys(after).filter((path) => after[path] !== before[path]);
    expect(changed.sort()).toEqual(['/nest-cli.json', '/package.json', '/src/app.module.ts', '/src/main.ts', '/test/app.e2e-spec.ts']);
  });

  it('prints what it changed, then what to do next, and notes the listen host', async () => {
    const { logs } = await run(runner, 'nest-add', FASTIFY, appTree());
    expect(logs[0]).toBe(
      [
        'info: @nest-jsonrpc/server is set up:',
        '  - src/main.ts: creates the app on FastifyAdapter (NestFastifyApplication) instead of Express',
        '  - test/app.e2e-spec.ts: createNestApplication() now gets a FastifyAdapter, and the test waits for Fastify to be ready after init()',
        '  - package.json: added @nest-jsonrpc/server@^0.1.0, @nestjs/platform-fastify@^12.0.1, @nestjs/throttler@^6.5.0, class-transformer@^0.5.1, class-validator@^0.15.0, fastify@^5.0.0',
        '  - src/app.module.ts: imports JsonRpcModule.forRoot()',
        '  - nest-cli.json: collection is @nest-jsonrpc/server (it extends @nestjs/schematics, so every `nest g` schematic still works, and `nest g rpc` needs no -c)',
        'Next:',
        '  nest g rpc hello              # a method, its DTOs and a spec that calls it over HTTP',
        '  nest g rpc feed --type stream # a streaming method',
      ].join('\n'),
    );
    expect(logs.slice(1)).toEqual([
      "warn: Note: src/main.ts: Fastify listens on localhost only unless given a host (Express listened on every interface): to accept outside connections (e.g. in a container) use app.listen(process.env.PORT ?? 3000, '0.0.0.0') (line 6).",
      KEPT_EXPRESS_NOTE,
    ]);
  });

  it('changes nothing the second time (the app is on Fastify now), and installs nothing', async () => {
    const first = await run(runner, 'nest-add', FASTIFY, appTree());
    const before = snapshot(first.tree);
    const second = await run(runner, 'nest-add', FASTIFY, first.tree);
    expect(snapshot(second.tree)).toEqual(before);
    expect(second.tasks).toEqual([]);
    // Nothing to change, and no "Next:" naming methods that may exist already.
    expect(second.logs[0]).toBe('info: @nest-jsonrpc/server is set up already: nothing to change.');
  });
});

describe('nest-add options', () => {
  it('--stream --durable --path write the module options and add better-sqlite3', async () => {
    const { tree } = await run(runner, 'nest-add', { stream: true, durable: true, path: '/api/rpc' }, appTree());
    expect(tree.readText('src/app.module.ts')).toContain(
      "imports: [JsonRpcModule.forRoot({ path: '/api/rpc', stream: { enabled: true }, durable: { enabled: true } })],",
    );
    expect(JSON.parse(tree.readText('package.json')).dependencies['better-sqlite3']).toBe('^13.0.0');
  });

  it('a later run with new options adds them to the existing forRoot, and then changes nothing', async () => {
    const first = await run(runner, 'nest-add', {}, appTree());
    const second = await run(runner, 'nest-add', { stream: true }, first.tree);
    expect(second.tree.readText('src/app.module.ts')).toContain('imports: [JsonRpcModule.forRoot({ stream: { enabled: true } })],');
    expect(second.logs[0]).toContain('  - src/app.module.ts: JsonRpcModule options now include stream: { enabled: true }');
    const before = snapshot(second.tree);
    const third = await run(runner, 'nest-add', { stream: true }, second.tree);
    expect(snapshot(third.tree)).toEqual(before);
  });

  it('edits a multi-line options literal in its own layout, correcting a disabled stream', async () => {
    const module = APP_MODULE_WITH_JSON_RPC.replace(
      'JsonRpcModule.forRoot()',
      "JsonRpcModule.forRoot({\n      maxBatchSize: 10,\n      stream: { enabled: false },\n    })",
    );
    const { tree } = await run(runner, 'nest-add', { stream: true, path: '/api' }, appTree({ 'src/main.ts': MAIN_ON_FASTIFY, 'src/app.module.ts': module }));
    expect(tree.readText('src/app.module.ts')).toContain(
      "JsonRpcModule.forRoot({\n      maxBatchSize: 10,\n      stream: { enabled: true },\n      path: '/api',\n    })",
    );
  });

  it('finds JsonRpcModule configured in another module and does not import it twice', async () => {
    const rpcModule = `import { Module } from '@nestjs/common';\nimport { JsonRpcModule } from '@nest-jsonrpc/server';\n\n@Module({ imports: [JsonRpcModule.forRoot()] })\nexport class RpcModule {}\n`;
    const { tree } = await run(runner, 'nest-add', { durable: true }, appTree({ 'src/main.ts': MAIN_ON_FASTIFY, 'src/rpc/rpc.module.ts': rpcModule }));
    expect(tree.readText('src/app.module.ts')).toBe(NEST_NEW_APP['src/app.module.ts']);
    expect(tree.readText('src/rpc/rpc.module.ts')).toContain('@Module({ imports: [JsonRpcModule.forRoot({ durable: { enabled: true } })] })');
  });

  it('rejects a --path that is not an absolute route', async () => {
    const tree = appTree();
    const before = snapshot(tree);
    await expect(run(runner, 'nest-add', { path: 'rpc' }, tree)).rejects.toThrow('--path must be an absolute route such as /rpc (got "rpc").');
    expect(snapshot(tree)).toEqual(before);
  });
});

describe('nest-add on other bootstrap files', () => {
  it('replaces NestExpressApplication and keeps the create options after the adapter', async () => {
    const main = `import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { ValidationPipe } from '@nestjs/common';
import { AppModule } from './app.module.js';

async function bootstrap() {
  const app = await NestFactory.create<NestExpressApplication>(AppModule, { cors: true, bufferLogs: true });
  app.setGlobalPrefix('api');
  app.useGlobalPipes(new ValidationPipe());
  app.enableShutdownHooks();
  await app.listen(3000, '0.0.0.0');
}
void bootstrap();
`;
    const { tree, logs } = await run(runner, 'nest-add', FASTIFY, appTree({ 'src/main.ts': main }));
    expect(tree.readText('src/main.ts')).toBe(`import { NestFactory } from '@nestjs/core';
import { ValidationPipe } from '@nestjs/common';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule } from './app.module.js';

async function bootstrap() {
  const app = await NestFactory.create<NestFastifyApplication>(AppModule, new FastifyAdapter(), { cors: true, bufferLogs: true });
  app.setGlobalPrefix('api');
  app.useGlobalPipes(new ValidationPipe());
  app.enableShutdownHooks();
  await app.listen(3000, '0.0.0.0');
}
void bootstrap();
`);
    // The only note: Express's packages are kept (the listen line names its host already).
    expect(logs.filter((l) => l.startsWith('warn'))).toEqual([KEPT_EXPRESS_NOTE]);
  });

  it('leaves a main.ts on Fastify as it is and still sets up the module, with Fastify’s packages', async () => {
    for (const options of [{}, FASTIFY]) {
      const { tree } = await run(runner, 'nest-add', options, appTree({ 'src/main.ts': MAIN_ON_FASTIFY }));
      expect(tree.readText('src/main.ts')).toBe(MAIN_ON_FASTIFY);
      expect(tree.readText('src/app.module.ts')).toBe(APP_MODULE_WITH_JSON_RPC);
      expect(JSON.parse(tree.readText('package.json')).dependencies).toMatchObject({ '@nestjs/platform-fastify': '^12.0.1', fastify: '^5.0.0' });
    }
  });

  it('leaves an Express main.ts with Express middleware and settings as it is (no --platform): the module serves it there', async () => {
    const main = `import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import helmet from 'helmet';
import { AppModule } from './app.module.js';

async function bootstrap() {
  const app = await NestFactory.create<NestExpressApplication>(AppModule);
  app.use(helmet());
  app.set('trust proxy', 1);
  await app.listen(3000);
}
void bootstrap();
`;
    const { tree, logs } = await run(runner, 'nest-add', {}, appTree({ 'src/main.ts': main }));
    expect(tree.readText('src/main.ts')).toBe(main);
    expect(tree.readText('src/app.module.ts')).toBe(APP_MODULE_WITH_JSON_RPC);
    expect(logs.filter((l) => l.startsWith('warn'))).toEqual([]);
  });

  it('sets up a root module declared in main.ts itself', async () => {
    const main = `import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';

@Module({})
class AppModule {}

const app = await NestFactory.create(AppModule);
await app.listen(3000, '127.0.0.1');
`;
    const { tree } = await run(runner, 'nest-add', FASTIFY, appTree({ 'src/main.ts': main }));
    expect(tree.readText('src/main.ts')).toBe(`import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { JsonRpcModule } from '@nest-jsonrpc/server';

@Module({ imports: [JsonRpcModule.forRoot()] })
class AppModule {}

const app = await NestFactory.create<NestFastifyApplication>(AppModule, new FastifyAdapter());
await app.listen(3000, '127.0.0.1');
`);
  });

  it('names what main.ts passes the app to, so the user can check it works on Fastify', async () => {
    const main = NEST_NEW_APP['src/main.ts'].replace('  await app.listen', "  SwaggerModule.setup('docs', app, document);\n  await app.listen");
    const { logs } = await run(runner, 'nest-add', FASTIFY, appTree({ 'src/main.ts': main }));
    expect(logs).toContain('warn: Note: src/main.ts: line 6 passes the app to `SwaggerModule.setup`: check that it supports Fastify.');
  });
});

/** What jest needs in a CommonJS app, as nest add notes it (the Node.js part depends on the Node.js running the schematic). */
function jestNote(...missing: string[]): string {
  const [major, minor] = process.versions.node.split('.').map(Number);
  const node = major > 24 || (major === 24 && minor >= 9) ? [] : [`this is Node.js v${process.versions.node}: run the tests on Node.js >= 24.9`];
  const all = [...missing, ...node];
  if (all.length === 0) return '';
  return (
    "warn: Note: jest loads ES modules (Nest 12's packages and @nest-jsonrpc/server) into this CommonJS app's tests through require(esm), " +
    `which takes jest >= 30.4 with --experimental-vm-modules, on Node.js >= 24.9; ${all.join('; ')}. ` +
    'On Node.js 20 and 22, jest cannot load Nest 12 into CommonJS tests at all; the build and `npm start` work on every supported Node.js.'
  );
}

describe('nest-add on the CommonJS template `nest new` writes (CJS + jest, @nestjs/cli 12)', () => {
  it('keeps main.ts and the e2e test on Express by default, and imports JsonRpcModule without .js', async () => {
    const { tree } = await run(runner, 'nest-add', {}, appTree({}, NEST_NEW_CJS_APP));
    for (const unchanged of ['src/main.ts', 'test/app.e2e-spec.ts', 'tsconfig.json']) {
      expect([unchanged, tree.readText(unchanged)]).toEqual([unchanged, NEST_NEW_CJS_APP[unchanged]]);
    }
    expect(tree.readText('src/app.module.ts')).toContain("import { JsonRpcModule } from '@nest-jsonrpc/server';\nimport { AppController } from './app.controller';\n");
  });

  it('--platform fastify switches main.ts and the e2e test to Fastify, imports JsonRpcModule without .js, and leaves tsconfig.json alone', async () => {
    const { tree } = await run(runner, 'nest-add', FASTIFY, appTree({}, NEST_NEW_CJS_APP));
    expect(tree.readText('src/main.ts')).toBe(CJS_MAIN_ON_FASTIFY);
    expect(tree.readText('src/app.module.ts')).toBe(`import { Module } from '@nestjs/common';
import { JsonRpcModule } from '@nest-jsonrpc/server';
import { AppController } from './app.controller';
import { AppService } from './app.service';

@Module({
  imports: [JsonRpcModule.forRoot()],
  controllers: [AppController],
  providers: [AppService],
})
export class AppModule {}
`);
    expect(tree.readText('test/app.e2e-spec.ts')).toContain(
      'app = moduleFixture.createNestApplication(new FastifyAdapter());\n    await app.init();\n    await app.getHttpAdapter().getInstance().ready();\n',
    );
    for (const unchanged of ['tsconfig.json', 'jest.config.ts', 'test/jest-e2e.json', 'src/app.controller.spec.ts']) {
      expect([unchanged, tree.readText(unchanged)]).toEqual([unchanged, NEST_NEW_CJS_APP[unchanged]]);
    }
  });

  it('says nothing about ES modules; about jest only what the running Node.js lacks', async () => {
    const { logs } = await run(runner, 'nest-add', FASTIFY, appTree({}, NEST_NEW_CJS_APP));
    expect(logs.join('\n')).not.toMatch(/ESM-only|"type": "module"/);
    expect(logs.slice(1)).toEqual([
      "warn: Note: src/main.ts: Fastify listens on localhost only unless given a host (Express listened on every interface): to accept outside connections (e.g. in a container) use app.listen(process.env.PORT ?? 3000, '0.0.0.0') (line 6).",
      KEPT_EXPRESS_NOTE,
      ...[jestNote()].filter(Boolean),
    ]);
  });

  it('reads the installed jest over the declared range', async () => {
    const old = await run(runner, 'nest-add', {}, appTree({ 'node_modules/jest/package.json': '{ "name": "jest", "version": "30.3.0" }' }, NEST_NEW_CJS_APP));
    expect(old.logs).toContain(jestNote('jest 30.3.0 is installed: upgrade it to ^30.4.0'));
    const current = await run(runner, 'nest-add', {}, appTree({ 'node_modules/jest/package.json': '{ "name": "jest", "version": "30.5.2" }' }, NEST_NEW_CJS_APP));
    expect(current.logs.filter((line) => line.includes('jest loads'))).toEqual([jestNote()].filter(Boolean));
  });
});

describe('nest-add on an older app: CommonJS, jest 29, decorator flags off', () => {
  it('turns the decorator flags on in tsconfig.json, keeps its comments, imports without .js, and says what jest needs', async () => {
    const { tree, logs } = await run(runner, 'nest-add', {}, appTree({}, JEST_COMMONJS_APP));
    expect(tree.readText('tsconfig.json')).toBe(`{
  // Nest 11 template
  "compilerOptions": {
    "module": "commonjs",
    "declaration": true,
    "target": "ES2023",
    "outDir": "./dist",
    "baseUrl": "./",
    "experimentalDecorators": true,
    "emitDecoratorMetadata": true,
  },
}
`);
    expect(tree.readText('src/main.ts')).toContain("import { AppModule } from './app.module';");
    expect(tree.readText('src/app.module.ts')).toContain('imports: [JsonRpcModule.forRoot()],');
    expect(logs[0]).toContain('  - tsconfig.json: turned on experimentalDecorators and emitDecoratorMetadata (DTO validation reads the decorator metadata)');
    expect(logs).toContain(
      jestNote(
        'package.json has jest@^29.7.0: upgrade it to ^30.4.0',
        'the "test" script runs jest without --experimental-vm-modules: run it as `node --experimental-vm-modules node_modules/jest/bin/jest.js`',
      ),
    );
    expect(logs.join('\n')).not.toMatch(/ESM-only/);
  });
});

describe('nest-add refuses, says what to do by hand, and writes nothing', () => {
  async function refused(changes: Record<string, string | null>, options: object = {}): Promise<string> {
    const tree = appTree(changes);
    const before = snapshot(tree);
    const error = await run(runner, 'nest-add', options, tree).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(error).toBeInstanceOf(Error);
    expect(snapshot(tree)).toEqual(before);
    return error!.message;
  }

  it('outside a Nest app: no package.json', async () => {
    const message = await refused({ 'package.json': null });
    expect(message).toBe(
      'There is no package.json here: run this inside a Nest app (the folder `nest new` created).\nNothing was changed. To do it by hand:\n' +
        '  - Create a Nest app with `nest new <name>` and run the command inside it, or follow the README section "Use it in your own Nest app".',
    );
  });

  it('outside a Nest app: no @nestjs/core', async () => {
    const message = await refused({ 'package.json': '{ "name": "x", "dependencies": { "express": "^5.0.0" } }' });
    expect(message).toMatch(/^package\.json does not depend on @nestjs\/core: this is not a Nest app\.\nNothing was changed\./);
  });

  it('a main.ts with a syntax error', async () => {
    const message = await refused({ 'src/main.ts': NEST_NEW_APP['src/main.ts'].replace('await app.listen(', 'await app.listen((') });
    expect(message).toBe(
      "src/main.ts could not be parsed (line 6, column 46: ')' expected.).\nNothing was changed. To do it by hand:\n" +
        '  - Fix the syntax error in src/main.ts and run the command again.',
    );
  });

  it('--platform fastify on a main.ts that uses Express middleware and settings, naming each line', async () => {
    const main = `import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import helmet from 'helmet';
import { AppModule } from './app.module.js';

async function bootstrap() {
  const app = await NestFactory.create<NestExpressApplication>(AppModule);
  app.use(helmet());
  app.set('trust proxy', 1);
  app.useStaticAssets('public');
  await app.listen(3000);
}
void bootstrap();
`;
    const message = await refused({ 'src/main.ts': main }, FASTIFY);
    expect(message).toBe(
      [
        'src/main.ts uses Express-specific code that has no automatic Fastify equivalent:',
        '    line 8: app.use(...) registers Express middleware',
        '    line 9: app.set(...) is Express-specific (or unknown to this check)',
        '    line 10: app.useStaticAssets(...) is Express-specific (or unknown to this check)',
        'Nothing was changed. To do it by hand:',
        '  - Port those lines to Fastify (Express middleware -> a Fastify plugin registered with app.register(), e.g. @fastify/helmet, @fastify/compress, @fastify/cookie; see https://docs.nestjs.com/techniques/performance).',
        '  - Create the app with `NestFactory.create<NestFastifyApplication>(AppModule, new FastifyAdapter())` (both from @nestjs/platform-fastify).',
        '  - Run `nest add @nest-jsonrpc/server --platform fastify` again: it leaves a Fastify main.ts as it is and does the rest.',
        '  - Or keep the app on Express: `nest add @nest-jsonrpc/server` without --platform serves JSON-RPC on Express as it is.',
      ].join('\n'),
    );
  });

  it('--platform fastify on a main.ts that builds its own Express adapter', async () => {
    const main = `import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import express from 'express';
import { AppModule } from './app.module.js';

const server = express();
const app = await NestFactory.create(AppModule, new ExpressAdapter(server));
await app.listen(3000);
`;
    const message = await refused({ 'src/main.ts': main }, FASTIFY);
    expect(message).toContain('    line 7: NestFactory.create is given `new ExpressAdapter(server)`, which this schematic cannot tell apart from an Express adapter\n');
    expect(message).toContain('    line 2: imports ExpressAdapter from @nestjs/platform-express\n');
    expect(message).toContain('    line 3: imports express\n');
  });

  it('--platform express on a main.ts on Fastify: the module serves it there as it is', async () => {
    const message = await refused({ 'src/main.ts': MAIN_ON_FASTIFY }, { platform: 'express' });
    expect(message).toBe(
      'src/main.ts creates the app on FastifyAdapter; this schematic does not move an app from Fastify to Express.\nNothing was changed. To do it by hand:\n' +
        '  - Run `nest add @nest-jsonrpc/server` without --platform: JsonRpcModule serves the app on Fastify as it is.\n' +
        '  - Or create the app without FastifyAdapter in main.ts (Express, Nest’s default) and run the command again.',
    );
  });

  it('a main.ts that starts no HTTP app', async () => {
    const main = `import { NestFactory } from '@nestjs/core';\nimport { AppModule } from './app.module.js';\n\nconst app = await NestFactory.createApplicationContext(AppModule);\nawait app.close();\n`;
    const message = await refused({ 'src/main.ts': main });
    expect(message).toMatch(/^src\/main\.ts starts no HTTP app \(it calls NestFactory\.createApplicationContext, not NestFactory\.create\(Module\)\); JSON-RPC is served over HTTP\.\n/);
  });

  it('no main.ts where nest-cli.json points', async () => {
    const message = await refused({ 'src/main.ts': null });
    expect(message).toMatch(/^There is no src\/main\.ts \(the bootstrap file nest-cli\.json's sourceRoot and entryFile point at\)\.\n/);
  });

  it('a root module imported through a path alias', async () => {
    const message = await refused({ 'src/main.ts': NEST_NEW_APP['src/main.ts'].replace("'./app.module.js'", "'@app/app.module'") });
    expect(message).toBe(
      "src/main.ts imports its root module AppModule from '@app/app.module', which this schematic cannot map to a file.\nNothing was changed. To do it by hand:\n" +
        '  - Add JsonRpcModule.forRoot() (from @nest-jsonrpc/server) to the imports of AppModule.',
    );
  });

  it('a root module file without the @Module class', async () => {
    const message = await refused({ 'src/app.module.ts': 'export class AppModule {}\n' });
    expect(message).toMatch(/^src\/app\.module\.ts has no @Module\(\) class named AppModule\.\n/);
  });

  it('module imports that are not an array literal', async () => {
    const module = NEST_NEW_APP['src/app.module.ts'].replace('imports: [],', 'imports: sharedImports,');
    const message = await refused({ 'src/app.module.ts': module });
    expect(message).toBe(
      'src/app.module.ts: `imports: sharedImports` on line 6 is not an array literal this schematic can edit.\nNothing was changed. To do it by hand:\n' +
        '  - Add JsonRpcModule.forRoot() (from @nest-jsonrpc/server) to the imports of AppModule.',
    );
  });

  it('options to write into a forRootAsync', async () => {
    const module = APP_MODULE_WITH_JSON_RPC.replace('JsonRpcModule.forRoot()', 'JsonRpcModule.forRootAsync({ useFactory: () => ({}) })');
    const message = await refused({ 'src/main.ts': MAIN_ON_FASTIFY, 'src/app.module.ts': module }, { stream: true });
    expect(message).toBe(
      'JsonRpcModule is configured at src/app.module.ts line 7 (JsonRpcModule.forRootAsync), which this schematic cannot edit.\nNothing was changed. To do it by hand:\n' +
        '  - Give JsonRpcModule these options: stream: { enabled: true }.',
    );
  });
});
