/**
 * `nest g rpc <name>` (the `rpc` schematic): the files it writes for each test runner and layout,
 * where it registers the provider, and what it refuses. That the generated code compiles, passes its
 * own spec and answers over HTTP in a real `nest new` app is test/schematics/nest-cli.e2e-spec.ts.
 */
import type { SchematicTestRunner, UnitTestTree } from '@angular-devkit/schematics/testing';
import { NEST_NEW_CJS_APP } from './fixtures/nest-new-cjs-app.js';
import { NEST_NEW_APP } from './fixtures/nest-new-app.js';
import { JEST_COMMONJS_APP } from './fixtures/older-apps.js';
import { appTree, createRunner, run, snapshot } from './schematics-runner.js';

let runner: SchematicTestRunner;
let setUpApp: UnitTestTree;
beforeAll(async () => {
  runner = createRunner();
  setUpApp = (await run(runner, 'nest-add', {}, appTree())).tree;
});

/** A fresh copy of the app after `nest add`, so tests do not see each other's files. */
function app(changes: Record<string, string | null> = {}): UnitTestTree {
  const files = Object.fromEntries(Object.entries(snapshot(setUpApp)).map(([path, text]) => [path.slice(1), text]));
  return appTree(changes, files);
}

const defaults = { flat: false, spec: true, specFileSuffix: 'spec', skipImport: false };

describe('the spec boots its testing app on the platform main.ts runs the app on', () => {
  it('on an app nest add --platform fastify switched: a FastifyAdapter', async () => {
    const fastifyApp = (await run(runner, 'nest-add', { platform: 'fastify' }, appTree())).tree;
    const { tree } = await run(runner, 'rpc', { ...defaults, name: 'hello', sourceRoot: 'src' }, fastifyApp);
    const spec = tree.readText('src/hello/hello.rpc.spec.ts');
    expect(spec).toContain("import { Test } from '@nestjs/testing';\nimport {\n  FastifyAdapter,\n  type NestFastifyApplication,\n} from '@nestjs/platform-fastify';\n");
    expect(spec).toContain('  let app: NestFastifyApplication;\n');
    expect(spec).toContain('    app = moduleRef.createNestApplication<NestFastifyApplication>(\n      new FastifyAdapter(),\n      { logger: false },\n    );\n');
    expect(spec).not.toContain('Express');
  });

  it('without a main.ts it can read: the dependencies decide (Fastify when the app depends on @nestjs/platform-fastify)', async () => {
    const pkg = JSON.parse(NEST_NEW_APP['package.json']);
    pkg.dependencies['@nestjs/platform-fastify'] = '^12.0.1';
    const { tree } = await run(runner, 'rpc', { ...defaults, name: 'hello', sourceRoot: 'src' }, app({ 'src/main.ts': null, 'package.json': JSON.stringify(pkg, null, 2) }));
    expect(tree.readText('src/hello/hello.rpc.spec.ts')).toContain('new FastifyAdapter()');
  });
});

describe('nest g rpc hello, in the app nest new + nest add made', () => {
  it('writes the provider, the DTOs and a vitest spec under src/hello', async () => {
    const { tree } = await run(runner, 'rpc', { ...defaults, name: 'hello', sourceRoot: 'src' }, app());
    expect(tree.files.filter((f) => f.startsWith('/src/hello/')).sort()).toEqual(['/src/hello/hello.dto.ts', '/src/hello/hello.rpc.spec.ts', '/src/hello/hello.rpc.ts']);
    expect(tree.readText('src/hello/hello.rpc.ts')).toBe(`import { Injectable } from '@nestjs/common';
import { RpcMethod } from '@nest-jsonrpc/server';
import { HelloParams, HelloResult } from './hello.dto.js';

@Injectable()
export class HelloRpc {
  /**
   * POST /rpc {"jsonrpc": "2.0", "method": "hello", "params": {"name": "Ada"}, "id": 1}
   * A handler without parameter decorators receives (params, ctx: RpcContext).
   */
  @RpcMethod('hello', {
    summary: 'Greets the caller by name',
    result: HelloResult,
  })
  hello(params: HelloParams): HelloResult {
    return { message: \`Hello, \${params.name}!\` };
  }
}
`);
    expect(tree.readText('src/hello/hello.dto.ts')).toBe(`import { IsNotEmpty, IsString, MaxLength } from 'class-validator';

/** Params of \`hello\`, validated before the handler runs: a violation answers -32602. */
export class HelloParams {
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  name!: string;
}

/** What \`hello\` answers (its schema in discovery documents comes from these decorators). */
export class HelloResult {
  @IsString()
  message!: string;
}
`);
    expect(tree.readText('src/hello/hello.rpc.spec.ts')).toBe(`import { Test } from '@nestjs/testing';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { JsonRpcModule } from '@nest-jsonrpc/server';
import {
  createRpcTestClient,
  JsonRpcError,
  type RpcTestClient,
} from '@nest-jsonrpc/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HelloRpc } from './hello.rpc.js';

/** Boots HelloRpc behind JsonRpcModule and calls it over HTTP, as a client does. */
describe('HelloRpc', () => {
  let app: NestExpressApplication;
  let rpc: RpcTestClient;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [JsonRpcModule.forRoot()],
      providers: [HelloRpc],
    }).compile();
    app = moduleRef.createNestApplication<NestExpressApplication>({
      logger: false,
    });
    rpc = await createRpcTestClient(app);
  });

  afterAll(async () => {
    await app.close();
  });

  it('answers with the result', async () => {
    expect(await rpc.call('hello', { name: 'Ada' })).toEqual({
      message: 'Hello, Ada!',
    });
  });

  it('answers -32602 with every violation when the params are invalid', async () => {
    const error = await rpc
      .call('hello', { name: '' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JsonRpcError);
    expect(error).toMatchObject({
      code: -32602,
      message: 'Invalid params',
      data: [
        {
          path: 'name',
          message: 'name should not be empty',
          code: 'isNotEmpty',
        },
      ],
    });
  });
});
`);
  });

  it('registers HelloRpc in the app module', async () => {
    const { tree } = await run(runner, 'rpc', { ...defaults, name: 'hello', sourceRoot: 'src' }, app());
    expect(tree.readText('src/app.module.ts')).toBe(`import { Module } from '@nestjs/common';
import { JsonRpcModule } from '@nest-jsonrpc/server';
import { AppController } from './app.controller.js';
import { AppService } from './app.service.js';
import { HelloRpc } from './hello/hello.rpc.js';

@Module({
  imports: [JsonRpcModule.forRoot()],
  controllers: [AppController],
  providers: [AppService, HelloRpc],
})
export class AppModule {}
`);
  });

  it('prints what it did and how to call the method', async () => {
    const { logs } = await run(runner, 'rpc', { ...defaults, name: 'hello', sourceRoot: 'src' }, app());
    expect(logs).toEqual([
      [
        'info: JSON-RPC method hello (HelloRpc):',
        '  - src/app.module.ts: provides HelloRpc',
        '  - src/hello: created hello.rpc.ts, hello.dto.ts, hello.rpc.spec.ts (spec for vitest)',
        'Next:',
        '  POST /rpc {"jsonrpc":"2.0","method":"hello","params":{"name":"Ada"},"id":1}',
      ].join('\n'),
    ]);
  });
});

describe('names and layout, as Nest schematics do them', () => {
  it('billing/charge: kebab folders, a dotted method name, the import path from the module', async () => {
    const { tree } = await run(runner, 'rpc', { ...defaults, name: 'Billing/ChargeCard', sourceRoot: 'src' }, app());
    expect(tree.exists('src/billing/charge-card/charge-card.rpc.ts')).toBe(true);
    const provider = tree.readText('src/billing/charge-card/charge-card.rpc.ts');
    expect(provider).toContain("@RpcMethod('billing.chargeCard', {\n    summary: 'Greets the caller by name',\n    result: ChargeCardResult,\n  })\n  chargeCard(params: ChargeCardParams): ChargeCardResult {");
    expect(provider).toContain("import { ChargeCardParams, ChargeCardResult } from './charge-card.dto.js';");
    expect(tree.readText('src/app.module.ts')).toContain("import { ChargeCardRpc } from './billing/charge-card/charge-card.rpc.js';");
  });

  it('registers in the nearest module, walking up from the new folder', async () => {
    const billingModule = "import { Module } from '@nestjs/common';\n\n@Module({})\nexport class BillingModule {}\n";
    const { tree } = await run(runner, 'rpc', { ...defaults, name: 'billing/charge', sourceRoot: 'src' }, app({ 'src/billing/billing.module.ts': billingModule }));
    expect(tree.readText('src/billing/billing.module.ts')).toBe(
      "import { Module } from '@nestjs/common';\nimport { ChargeRpc } from './charge/charge.rpc.js';\n\n@Module({ providers: [ChargeRpc] })\nexport class BillingModule {}\n",
    );
    expect(tree.readText('src/app.module.ts')).toBe(setUpApp.readText('src/app.module.ts'));
  });

  it('--path puts the folder under it and prefixes the method name', async () => {
    const { tree } = await run(runner, 'rpc', { ...defaults, name: 'list', path: 'admin/users', sourceRoot: 'src' }, app());
    expect(tree.readText('src/admin/users/list/list.rpc.ts')).toContain("@RpcMethod('admin.users.list',");
  });

  it('--flat writes the files into the folder itself', async () => {
    const { tree } = await run(runner, 'rpc', { ...defaults, name: 'hello', flat: true, sourceRoot: 'src' }, app());
    expect(['src/hello.rpc.ts', 'src/hello.dto.ts', 'src/hello.rpc.spec.ts'].map((f) => tree.exists(f))).toEqual([true, true, true]);
    expect(tree.readText('src/app.module.ts')).toContain("import { HelloRpc } from './hello.rpc.js';");
  });

  it('--no-spec writes no spec; --spec-file-suffix renames it', async () => {
    const noSpec = await run(runner, 'rpc', { ...defaults, name: 'hello', spec: false, sourceRoot: 'src' }, app());
    expect(noSpec.tree.files.filter((f) => f.startsWith('/src/hello/')).sort()).toEqual(['/src/hello/hello.dto.ts', '/src/hello/hello.rpc.ts']);
    const suffix = await run(runner, 'rpc', { ...defaults, name: 'hello', specFileSuffix: 'test', sourceRoot: 'src' }, app());
    expect(suffix.tree.exists('src/hello/hello.rpc.test.ts')).toBe(true);
  });

  it('--skip-import leaves the modules alone', async () => {
    const { tree } = await run(runner, 'rpc', { ...defaults, name: 'hello', skipImport: true, sourceRoot: 'src' }, app());
    expect(tree.exists('src/hello/hello.rpc.ts')).toBe(true);
    expect(tree.readText('src/app.module.ts')).toBe(setUpApp.readText('src/app.module.ts'));
  });

  it('takes the source root from nest-cli.json when the CLI passes none', async () => {
    const nestCli = NEST_NEW_APP['nest-cli.json'].replace('"sourceRoot": "src"', '"sourceRoot": "apps/api/src"');
    const files = Object.fromEntries(Object.entries(NEST_NEW_APP).map(([p, t]) => [p.replace(/^src\//, 'apps/api/src/'), t]));
    const tree = (await run(runner, 'nest-add', {}, appTree({ 'nest-cli.json': nestCli }, files))).tree;
    const { tree: generated } = await run(runner, 'rpc', { ...defaults, name: 'hello' }, tree);
    expect(generated.exists('apps/api/src/hello/hello.rpc.ts')).toBe(true);
    expect(generated.readText('apps/api/src/app.module.ts')).toContain('providers: [AppService, HelloRpc],');
  });
});

describe('nest g rpc feed --type stream', () => {
  it('writes an @RpcStream async generator, its row class and a stream spec', async () => {
    const { tree } = await run(runner, 'rpc', { ...defaults, name: 'feed', type: 'stream', sourceRoot: 'src' }, app());
    expect(tree.readText('src/feed/feed.rpc.ts')).toBe(`import { Injectable } from '@nestjs/common';
import {
  RpcMethod,
  RpcStream,
  StreamFormat,
  type RpcContext,
} from '@nest-jsonrpc/server';
import { FeedParams, FeedRow } from './feed.dto.js';

@Injectable()
export class FeedRpc {
  /**
   * POST /rpc/stream {"jsonrpc": "2.0", "method": "feed", "params": {"count": 3}, "id": 1}
   * Each yielded value is one row, sent as soon as it is produced.
   */
  @RpcMethod('feed', { summary: 'Streams count rows' })
  @RpcStream({ format: StreamFormat.Ndjson, row: FeedRow })
  async *feed(params: FeedParams, ctx: RpcContext): AsyncGenerator<FeedRow> {
    for (let index = 0; index < params.count; index++) {
      // The client went away: stop producing.
      if (ctx.signal.aborted) return;
      yield { index, message: \`row \${index + 1} of \${params.count}\` };
    }
  }
}
`);
    expect(tree.readText('src/feed/feed.dto.ts')).toContain('export class FeedRow {\n  @IsInt()\n  index!: number;\n\n  @IsString()\n  message!: string;\n}\n');
    const spec = tree.readText('src/feed/feed.rpc.spec.ts');
    expect(spec).toContain('imports: [JsonRpcModule.forRoot({ stream: { enabled: true } })],');
    expect(spec).toContain(`    expect(await rpc.stream('feed', { count: 3 }).toArray()).toEqual([
      { index: 0, message: 'row 1 of 3' },
      { index: 1, message: 'row 2 of 3' },
      { index: 2, message: 'row 3 of 3' },
    ]);`);
    expect(spec).toContain(`    const error = await rpc
      .stream('feed', { count: 101 })
      .toArray()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JsonRpcError);`);
  });

  it('breaks a signature too long for one line the way Prettier does', async () => {
    const { tree } = await run(runner, 'rpc', { ...defaults, name: 'quarterly-revenue-report', type: 'stream', sourceRoot: 'src' }, app());
    expect(tree.readText('src/quarterly-revenue-report/quarterly-revenue-report.rpc.ts')).toContain(
      '  async *quarterlyRevenueReport(\n    params: QuarterlyRevenueReportParams,\n    ctx: RpcContext,\n  ): AsyncGenerator<QuarterlyRevenueReportRow> {\n    for',
    );
  });

  it('turns the stream route on in the JsonRpcModule options (startup fails without it), once', async () => {
    const first = await run(runner, 'rpc', { ...defaults, name: 'feed', stream: true, sourceRoot: 'src' }, app());
    expect(first.tree.readText('src/app.module.ts')).toContain('imports: [JsonRpcModule.forRoot({ stream: { enabled: true } })],');
    expect(first.logs[0]).toContain('  - src/app.module.ts: JsonRpcModule options now include stream: { enabled: true }\n');
    const second = await run(runner, 'rpc', { ...defaults, name: 'ticks', type: 'stream', sourceRoot: 'src' }, first.tree);
    expect(second.logs[0]).not.toContain('JsonRpcModule options');
    expect(second.tree.readText('src/app.module.ts')).toContain('imports: [JsonRpcModule.forRoot({ stream: { enabled: true } })],');
  });

  it('only notes what to do when the options cannot be edited', async () => {
    const module = setUpApp.readText('src/app.module.ts').replace('JsonRpcModule.forRoot()', 'JsonRpcModule.forRoot(rpcOptions)');
    const { tree, logs } = await run(runner, 'rpc', { ...defaults, name: 'feed', type: 'stream', sourceRoot: 'src' }, app({ 'src/app.module.ts': module }));
    expect(tree.exists('src/feed/feed.rpc.ts')).toBe(true);
    expect(logs).toContain(
      'warn: Note: JsonRpcModule is configured at src/app.module.ts line 8 (options `rpcOptions`): make sure its options include stream: { enabled: true }, or startup fails.',
    );
  });
});

describe('the spec follows the app’s test runner', () => {
  it('jest in the CommonJS template: jest’s globals, the testing helper, imports without .js', async () => {
    const template = (await run(runner, 'nest-add', {}, appTree({}, NEST_NEW_CJS_APP))).tree;
    const { tree, logs } = await run(runner, 'rpc', { ...defaults, name: 'hello', sourceRoot: 'src' }, template);
    const spec = tree.readText('src/hello/hello.rpc.spec.ts');
    expect(spec).toContain(`import {
  createRpcTestClient,
  JsonRpcError,
  type RpcTestClient,
} from '@nest-jsonrpc/server/testing';
import { HelloRpc } from './hello.rpc';

/** Boots HelloRpc behind JsonRpcModule and calls it over HTTP, as a client does. */
describe('HelloRpc', () => {`);
    expect(spec).not.toContain('vitest');
    expect(tree.readText('src/app.module.ts')).toContain("import { HelloRpc } from './hello/hello.rpc';");
    expect(logs[0]).toContain('hello.rpc.spec.ts (spec for jest)');
  });

  it('jest in a CommonJS app: globals, imports without .js', async () => {
    const legacy = (await run(runner, 'nest-add', {}, appTree({}, JEST_COMMONJS_APP))).tree;
    const { tree, logs } = await run(runner, 'rpc', { ...defaults, name: 'hello', sourceRoot: 'src' }, legacy);
    const spec = tree.readText('src/hello/hello.rpc.spec.ts');
    expect(spec).not.toContain("from 'vitest'");
    expect(spec).toContain("} from '@nest-jsonrpc/server/testing';\nimport { HelloRpc } from './hello.rpc';\n");
    expect(tree.readText('src/hello/hello.rpc.ts')).toContain("from './hello.dto';");
    expect(tree.readText('src/app.module.ts')).toContain("import { HelloRpc } from './hello/hello.rpc';");
    expect(logs[0]).toContain('hello.rpc.spec.ts (spec for jest)');
  });

  it('the runner the test script calls wins over the dependencies', async () => {
    const pkg = JSON.parse(setUpApp.readText('package.json'));
    pkg.devDependencies.jest = '^30.0.0';
    const { tree } = await run(runner, 'rpc', { ...defaults, name: 'hello', sourceRoot: 'src' }, app({ 'package.json': JSON.stringify(pkg) }));
    expect(tree.readText('src/hello/hello.rpc.spec.ts')).toContain("from 'vitest';");
  });

  it('no runner at all: no spec, and a note saying why', async () => {
    const pkg = JSON.parse(setUpApp.readText('package.json'));
    delete pkg.devDependencies.vitest;
    pkg.scripts.test = 'node --test';
    const { tree, logs } = await run(runner, 'rpc', { ...defaults, name: 'hello', sourceRoot: 'src' }, app({ 'package.json': JSON.stringify(pkg) }));
    expect(tree.exists('src/hello/hello.rpc.spec.ts')).toBe(false);
    expect(logs).toContain(
      'warn: Note: No spec written: package.json has neither vitest nor jest. Add one of them (vitest, as `nest new` does) and generate again, or pass --no-spec.',
    );
  });
});

describe('nest g rpc refuses, and writes nothing', () => {
  async function refused(options: object, tree: UnitTestTree): Promise<string> {
    const before = snapshot(tree);
    const error = await run(runner, 'rpc', { ...defaults, sourceRoot: 'src', ...options }, tree).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(error).toBeInstanceOf(Error);
    expect(snapshot(tree)).toEqual(before);
    return error!.message;
  }

  it('when no module is found', async () => {
    const message = await refused({ name: 'hello' }, app({ 'src/app.module.ts': null }));
    expect(message).toBe(
      'No *.module.ts in src/hello or any folder above it, so HelloRpc has no module to join.\nNothing was changed. To do it by hand:\n' +
        '  - Create one (nest g module hello) and run the command again,\n' +
        "  - or pass --skip-import and add HelloRpc to a module's providers yourself.",
    );
  });

  it('when the files exist already', async () => {
    const once = (await run(runner, 'rpc', { ...defaults, name: 'hello', sourceRoot: 'src' }, app())).tree;
    const message = await refused({ name: 'hello' }, once);
    expect(message).toBe(
      'src/hello/hello.rpc.ts and src/hello/hello.dto.ts exist already.\nNothing was changed. To do it by hand:\n' +
        '  - Pick another name, or delete them and run the command again.',
    );
  });

  it('outside a Nest app', async () => {
    const message = await refused({ name: 'hello' }, appTree({ 'package.json': '{ "name": "not-nest" }' }));
    expect(message).toMatch(/^package\.json does not depend on @nestjs\/core: this is not a Nest app\./);
  });

  it('for a name that makes no identifier, or a reserved method name', async () => {
    expect(await refused({ name: '42' }, app())).toBe('"42" is not a usable name: use letters, digits and dashes, optionally under a path (billing/charge).');
    expect(await refused({ name: 'rpc/discover' }, app())).toBe(
      '"rpc.discover" (from "rpc/discover") is not a usable JSON-RPC method name: dot-separated identifiers (billing.charge), not starting with the reserved "rpc.".',
    );
  });

  it('for JavaScript projects', async () => {
    expect(await refused({ name: 'hello', language: 'js' }, app())).toBe('@nest-jsonrpc/server generates TypeScript only (nest-cli.json says language "js").');
  });
});

// `--schema zod` (`--type zod` / `zod-stream` through the Nest CLI, which refuses flags it does not
// know): zod schemas in place of the DTOs, zod added to the app, the spec expecting zod's -32602 data.
describe('nest g rpc hello --schema zod', () => {
  it('writes zod schemas in place of the DTOs, and the provider takes them as params and result', async () => {
    const { tree } = await run(runner, 'rpc', { ...defaults, name: 'hello', sourceRoot: 'src', schema: 'zod' }, app());
    expect(tree.files.filter((f) => f.startsWith('/src/hello/')).sort()).toEqual(['/src/hello/hello.rpc.spec.ts', '/src/hello/hello.rpc.ts', '/src/hello/hello.schema.ts']);
    // The DTO style's provider, importing the schemas instead and passing the params schema too.
    const dto = await run(runner, 'rpc', { ...defaults, name: 'hello', sourceRoot: 'src' }, app());
    expect(tree.readText('src/hello/hello.rpc.ts')).toBe(
      dto.tree
        .readText('src/hello/hello.rpc.ts')
        .replace("from './hello.dto.js'", "from './hello.schema.js'")
        .replace('    result: HelloResult,\n', '    params: HelloParams,\n    result: HelloResult,\n'),
    );
    const schemas = tree.readText('src/hello/hello.schema.ts');
    expect(schemas).toContain("import { z } from 'zod';");
    expect(schemas).toContain('export const HelloParams = z.object({\n  name: z.string().trim().min(1).max(100),\n});\nexport type HelloParams = z.output<typeof HelloParams>;');
    expect(schemas).toContain('export const HelloResult = z.object({\n  message: z.string(),\n});');
    const spec = tree.readText('src/hello/hello.rpc.spec.ts');
    expect(spec).toContain("message: 'Too small: expected string to have >=1 characters',\n          code: 'too_small',");
    expect(spec).not.toContain('isNotEmpty');
  });

  it('adds zod to the dependencies (at the range with Standard JSON Schema) and installs it', async () => {
    const { tree, tasks } = await run(runner, 'rpc', { ...defaults, name: 'hello', sourceRoot: 'src', schema: 'zod' }, app());
    expect(JSON.parse(tree.readText('package.json')).dependencies.zod).toBe('^4.2.0');
    expect(tasks).toContain('node-package');
  });

  it('keeps an app zod it already has, and installs nothing', async () => {
    const withZod = app();
    const pkg = JSON.parse(withZod.readText('package.json'));
    withZod.overwrite('package.json', JSON.stringify({ ...pkg, dependencies: { ...pkg.dependencies, zod: '~4.6.0' } }, null, 2) + '\n');
    const { tree, tasks } = await run(runner, 'rpc', { ...defaults, name: 'hello', sourceRoot: 'src', schema: 'zod' }, withZod);
    expect(JSON.parse(tree.readText('package.json')).dependencies.zod).toBe('~4.6.0');
    expect(tasks).not.toContain('node-package');
  });

  it('--type zod is the same (how the Nest CLI passes it); the DTO style neither touches package.json nor writes schemas', async () => {
    const viaType = await run(runner, 'rpc', { ...defaults, name: 'hello', sourceRoot: 'src', type: 'zod' }, app());
    const viaSchema = await run(runner, 'rpc', { ...defaults, name: 'hello', sourceRoot: 'src', schema: 'zod' }, app());
    expect(viaType.tree.readText('src/hello/hello.rpc.ts')).toBe(viaSchema.tree.readText('src/hello/hello.rpc.ts'));
    const dto = await run(runner, 'rpc', { ...defaults, name: 'hello', sourceRoot: 'src' }, app());
    expect(dto.tree.exists('src/hello/hello.schema.ts')).toBe(false);
    expect(dto.tree.readText('src/hello/hello.rpc.ts')).not.toContain('    params: HelloParams,');
    expect(JSON.parse(dto.tree.readText('package.json')).dependencies.zod).toBeUndefined();
  });
});

describe('nest g rpc feed --type zod-stream', () => {
  it('an @RpcStream whose params and row are zod schemas, the stream route turned on', async () => {
    const { tree } = await run(runner, 'rpc', { ...defaults, name: 'feed', sourceRoot: 'src', type: 'zod-stream' }, app());
    const provider = tree.readText('src/feed/feed.rpc.ts');
    expect(provider).toContain("import { FeedParams, FeedRow } from './feed.schema.js';");
    expect(provider).toContain("  @RpcMethod('feed', {\n    summary: 'Streams count rows',\n    params: FeedParams,\n  })\n  @RpcStream({ format: StreamFormat.Ndjson, row: FeedRow })\n");
    expect(tree.readText('src/feed/feed.schema.ts')).toContain('export const FeedRow = z.object({');
    expect(tree.readText('src/feed/feed.rpc.spec.ts')).toContain("message: 'Too big: expected number to be <=100',\n          code: 'too_big',");
    expect(tree.readText('src/app.module.ts')).toContain('stream: { enabled: true }');
  });
});
