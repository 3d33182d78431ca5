/**
 * The packed packages in a CommonJS app, the kind `nest new` makes with its CJS template and every
 * app upgraded from Nest 11 is: `npm pack` every library, install the tarballs into a scratch app
 * without `"type": "module"`, type-check it the ways CommonJS apps compile (TypeScript `module:
 * commonjs`, `nodenext`, `bundler`; `node10` with TypeScript 5; `node16` for the packages that do
 * not need Nest), build it to CommonJS, and run it on Node 20 and Node 24: it require()s the
 * module, serves /rpc on Fastify, and uses the testing helper with an overridden provider. Every
 * export entry loads with require() and import() as one module; a Node without require(esm)
 * gets one error naming the versions needed.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeReleaseHome } from '../../.ci/node-release.mjs';
import { run } from '../support/processes.js';
import { packLibraries, workspaceVersions, type PackedPackage } from '../support/workspace-packs.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const ENGINES = '^20.19.0 || ^22.12.0 || >=24.0.0';
/** What `nest new` (CJS template) installs, and what these sources compile with. */
const TYPESCRIPT_6 = '6.0.3';
const MINUTES = 60_000;

const APP_MODULE = `
import { Injectable, Module } from '@nestjs/common';
import { IsNumber } from 'class-validator';
import { JsonRpcModule, RpcException, RpcMethod, RpcStream, type RpcContext } from '@nest-jsonrpc/server';

export class AddDto {
  @IsNumber() a!: number;
  @IsNumber() b!: number;
}

@Injectable()
export class MathRpc {
  @RpcMethod('math.add')
  add(params: AddDto, ctx: RpcContext) {
    return { sum: params.a + params.b, method: ctx.method };
  }

  @RpcMethod('fail')
  fail() {
    throw new RpcException('Nope', { code: 4000, data: { why: 'because' } });
  }

  @RpcMethod('count')
  @RpcStream()
  async *count(params: { n: number }) {
    for (let i = 1; i <= params.n; i++) yield { i };
  }
}

@Module({ imports: [JsonRpcModule.forRoot({ stream: { enabled: true } })], providers: [MathRpc] })
export class AppModule {}
`;

const MAIN = `
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule } from './app.module';

async function bootstrap() {
  const app = await NestFactory.create<NestFastifyApplication>(AppModule, new FastifyAdapter(), { logger: false });
  await app.listen(0, '127.0.0.1');
  console.log('PORT=' + (app.getHttpServer().address() as { port: number }).port);
}
void bootstrap();
`;

/** The testing helper from CommonJS, on an app whose RPC provider is replaced by a plain object. */
const CHECK_TESTING = `
import { Test } from '@nestjs/testing';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { createRpcTestClient, JsonRpcError } from '@nest-jsonrpc/server/testing';
import { AppModule, MathRpc, type AddDto } from './app.module';

async function check() {
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] })
    .overrideProvider(MathRpc)
    .useValue({ add: (p: AddDto) => ({ mocked: p.a * p.b }), fail: () => 'no', count: () => [{ i: 'mocked' }] })
    .compile();
  const app = moduleRef.createNestApplication<NestFastifyApplication>(new FastifyAdapter(), { logger: false });
  const rpc = await createRpcTestClient(app);
  const rows: unknown[] = [];
  for await (const row of rpc.stream('count', { n: 2 })) rows.push(row);
  const invalid = await rpc.call('math.add', { a: 'x', b: 1 }).catch((e: unknown) => e);
  console.log('TESTING=' + JSON.stringify({
    mocked: await rpc.call('math.add', { a: 6, b: 7 }),
    rows,
    invalid: invalid instanceof JsonRpcError ? { code: invalid.code, data: invalid.data } : String(invalid),
  }));
  await app.close();
}
void check();
`;

/** Types from every package and subpath: a wrong argument must not compile (the typings are real, not \`any\`). */
const TYPINGS_ALL = `
import { JsonRpcModule, RpcMethod, type JsonRpcModuleOptions } from '@nest-jsonrpc/server';
import { createRpcTestClient, type RpcTestClient } from '@nest-jsonrpc/server/testing';
import { JsonRpcClient, JsonRpcError } from '@nest-jsonrpc/client';
import { generateClient } from '@nest-jsonrpc/client/codegen';
import * as codegen from '@nest-jsonrpc/codegen';
import { RpcErrorCode } from '@nest-jsonrpc/protocol';
import { runToolLoop } from '@nest-jsonrpc/llm';

export const options: JsonRpcModuleOptions = { path: '/rpc', maxBatchSize: 10 };
// @ts-expect-error path is a string
export const wrong: JsonRpcModuleOptions = { path: 42 };
export const values = [JsonRpcModule.forRoot(options), RpcMethod, JsonRpcError, generateClient === codegen.generateClient, RpcErrorCode.MethodNotFound, runToolLoop];
export async function typed(client: RpcTestClient): Promise<number> {
  const again: Promise<RpcTestClient> = createRpcTestClient(null as never);
  void again;
  return client.call<number>('x');
}
export const plain = new JsonRpcClient({ url: 'http://127.0.0.1/rpc' });
`;

/** The packages without Nest, for \`module: node16\` (where TypeScript cannot require an ES module's typings, Nest's own included). */
const TYPINGS_WITHOUT_NEST = `
import { JsonRpcClient, JsonRpcError } from '@nest-jsonrpc/client';
import { generateClient } from '@nest-jsonrpc/client/codegen';
import { runCli } from '@nest-jsonrpc/codegen';
import { RpcErrorCode, isErrorObject } from '@nest-jsonrpc/protocol';
import { runToolLoop, type LlmTool } from '@nest-jsonrpc/llm';

export const client = new JsonRpcClient({ url: 'http://127.0.0.1/rpc' });
// @ts-expect-error url is required
export const wrong = new JsonRpcClient({});
export const tool: LlmTool = { name: 'add', parameters: { type: 'object' }, execute: () => 1 };
export const values = [JsonRpcError, generateClient, runCli, RpcErrorCode.ParseError, isErrorObject, runToolLoop];
`;

/** Plain CommonJS, not compiled: each entry by require() and by import(), which must be one module. */
const ENTRIES_SCRIPT = `
const entries = JSON.parse(process.argv[2]);
(async () => {
  const loaded = {};
  for (const entry of entries) {
    const required = require(entry);
    const imported = await import(entry);
    loaded[entry] = { same: required === imported, names: Object.keys(required).length > 0 };
  }
  console.log(JSON.stringify(loaded));
})();
`;

/** A tsconfig.json over `src` (or only `files`), strict, decorators on, skipLibCheck off. */
function tsconfig(compilerOptions: Record<string, unknown>, files?: string[]): string {
  return JSON.stringify({
    compilerOptions: {
      target: 'ES2022', strict: true, esModuleInterop: true, experimentalDecorators: true, emitDecoratorMetadata: true,
      skipLibCheck: false, types: ['node'], noEmit: true, ...compilerOptions,
    },
    ...(files ? { files } : { include: ['src'] }),
  }, null, 2);
}

describe('the packed packages in a CommonJS app (Node 20 and Node 24)', () => {
  let scratch: string;
  let app: string;
  let packages: PackedPackage[];
  let node24: string;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    for (const lib of ['protocol', 'server', 'codegen', 'client', 'llm']) {
      if (!existsSync(join(root, 'libs', lib, 'dist/require/index.cjs'))) throw new Error(`libs/${lib}/dist is not built: run npm run build first`);
    }
    node24 = join(nodeReleaseHome(root, 24), 'bin/node');
    scratch = mkdtempSync(join(tmpdir(), 'nest-jsonrpc-cjs-pack-'));
    packages = await packLibraries(root, scratch);
    app = join(scratch, 'app');
    mkdirSync(join(app, 'src'), { recursive: true });
    writeFileSync(join(app, 'package.json'), JSON.stringify({
      name: 'cjs-app', private: true, license: 'UNLICENSED',
      dependencies: {
        ...Object.fromEntries(packages.map((p) => [p.manifest.name, `file:${p.file}`])),
        // @nestjs/terminus: the optional peer of the `/terminus` entry, which every entry here loads.
        ...workspaceVersions(root, ['@nestjs/common', '@nestjs/core', '@nestjs/platform-fastify', '@nestjs/testing', '@nestjs/throttler', '@nestjs/terminus', 'fastify', 'class-validator', 'class-transformer', 'reflect-metadata', 'rxjs']),
      },
      devDependencies: { typescript: TYPESCRIPT_6, ...workspaceVersions(root, ['@types/node']) },
    }, null, 2));
    writeFileSync(join(app, 'src/app.module.ts'), APP_MODULE);
    writeFileSync(join(app, 'src/main.ts'), MAIN);
    writeFileSync(join(app, 'src/check-testing.ts'), CHECK_TESTING);
    writeFileSync(join(app, 'src/typings-all.ts'), TYPINGS_ALL);
    writeFileSync(join(app, 'src/typings-without-nest.ts'), TYPINGS_WITHOUT_NEST);
    writeFileSync(join(app, 'entries.js'), ENTRIES_SCRIPT);
    // The build: CommonJS output, as a Nest 11 app (and `module: commonjs` apps generally) compiles.
    writeFileSync(join(app, 'tsconfig.json'), tsconfig({ module: 'commonjs', noEmit: false, outDir: 'dist', rootDir: 'src' }));
    writeFileSync(join(app, 'tsconfig.nodenext.json'), tsconfig({ module: 'nodenext' }));
    writeFileSync(join(app, 'tsconfig.bundler.json'), tsconfig({ module: 'commonjs', moduleResolution: 'bundler' }));
    writeFileSync(join(app, 'tsconfig.node10.json'), tsconfig({ module: 'commonjs', moduleResolution: 'node10' }));
    writeFileSync(join(app, 'tsconfig.node16.json'), tsconfig({ module: 'node16' }, ['src/typings-without-nest.ts']));
    execFileSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: app, stdio: 'inherit' });
    // The app's build (TypeScript 6, module commonjs, skipLibCheck off): what the tests below run.
    await run('node', [join(app, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], { cwd: app });
  }, 10 * MINUTES);

  afterAll(() => {
    for (const child of children) child.kill('SIGKILL');
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it('every package declares the engines Nest 12 needs and an exports map with require and import for each entry', () => {
    for (const { manifest } of packages) {
      expect([manifest.name, (manifest.engines as { node: string }).node]).toEqual([manifest.name, ENGINES]);
      for (const [subpath, entry] of Object.entries(manifest.exports as Record<string, unknown>)) {
        if (subpath === './package.json') continue;
        expect([manifest.name, subpath, Object.keys(entry as object)]).toEqual([manifest.name, subpath, ['require', 'types', 'import', 'default']]);
      }
    }
  });

  it('TypeScript resolves the typings: module commonjs, nodenext and bundler (TypeScript 6), node10 (TypeScript 5), node16 without Nest', async () => {
    const tsc6 = join(app, 'node_modules/typescript/bin/tsc');
    const tsc5 = join(root, 'node_modules/typescript/bin/tsc');
    expect(execFileSync('node', [tsc6, '--version'], { encoding: 'utf8' }).trim()).toBe(`Version ${TYPESCRIPT_6}`);
    expect(execFileSync('node', [tsc5, '--version'], { encoding: 'utf8' }).trim()).toMatch(/^Version 5\./);
    // tsconfig.json (module commonjs) built the app in beforeAll.
    const projects: Array<[string, string]> = [
      [tsc6, 'tsconfig.nodenext.json'],
      [tsc6, 'tsconfig.bundler.json'],
      [tsc5, 'tsconfig.node10.json'],
      [tsc6, 'tsconfig.node16.json'],
    ];
    // Two at a time (each checks every declaration file it reaches: skipLibCheck is off).
    const failures: string[] = [];
    const check = async ([tsc, project]: [string, string]) => {
      await run('node', [tsc, '-p', project], { cwd: app }).catch((error: Error) => failures.push(`${project}: ${error.message}`));
    };
    for (let i = 0; i < projects.length; i += 2) await Promise.all(projects.slice(i, i + 2).map(check));
    expect(failures).toEqual([]);
    // The build is CommonJS that require()s the module.
    const compiled = readFileSync(join(app, 'dist/app.module.js'), 'utf8');
    expect(compiled).toContain('"use strict";');
    expect(compiled).toContain('require("@nest-jsonrpc/server")');
  }, 5 * MINUTES);

  it.each([
    ['Node 20', () => 'node'],
    ['Node 24', () => node24],
  ])('%s: the app starts on Fastify and answers /rpc; the testing helper works from CommonJS', async (_name, nodeBinary) => {
    const node = nodeBinary();
    const child = spawn(node, ['dist/main.js'], { cwd: app, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let log = '';
    const port = await new Promise<number>((resolvePort, reject) => {
      const collect = (chunk: Buffer) => {
        log += chunk;
        const found = /PORT=(\d+)/.exec(log);
        if (found) resolvePort(Number(found[1]));
      };
      child.stdout!.on('data', collect);
      child.stderr!.on('data', collect);
      child.once('exit', (code) => reject(new Error(`the app exited with ${code}:\n${log}`)));
    });
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
    };
    expect(await post('/rpc', { jsonrpc: '2.0', method: 'math.add', params: { a: 2, b: 3 }, id: 1 })).toEqual({
      status: 200, type: 'application/json; charset=utf-8', text: '{"jsonrpc":"2.0","result":{"sum":5,"method":"math.add"},"id":1}',
    });
    expect(JSON.parse((await post('/rpc', { jsonrpc: '2.0', method: 'math.add', params: { a: 'x', b: 3 }, id: 2 })).text)).toEqual({
      jsonrpc: '2.0', error: { code: -32602, message: 'Invalid params', data: [{ path: 'a', message: 'a must be a number conforming to the specified constraints', code: 'isNumber' }] }, id: 2,
    });
    expect(JSON.parse((await post('/rpc', { jsonrpc: '2.0', method: 'fail', id: 3 })).text)).toEqual({ jsonrpc: '2.0', error: { code: 4000, message: 'Nope', data: { why: 'because' } }, id: 3 });
    expect(await post('/rpc/stream', { jsonrpc: '2.0', method: 'count', params: { n: 2 }, id: 4 })).toEqual({
      status: 200, type: 'application/x-ndjson; charset=utf-8', text: '{"i":1}\n{"i":2}\n',
    });
    child.kill('SIGTERM');
    // Nothing on stderr: no ExperimentalWarning for require(esm), no deprecation.
    expect(log).toBe(`PORT=${port}\n`);

    const testing = execFileSync(node, ['dist/check-testing.js'], { cwd: app, encoding: 'utf8', timeout: 60_000 });
    expect(JSON.parse(/TESTING=(.*)/.exec(testing)![1])).toEqual({
      mocked: { mocked: 42 },
      rows: [{ i: 'mocked' }],
      invalid: { code: -32602, data: [{ path: 'a', message: 'a must be a number conforming to the specified constraints', code: 'isNumber' }] },
    });
  }, 2 * MINUTES);

  it('every export entry of every package loads with require() and with import() as the same module, on Node 20 and Node 24', () => {
    const entries = packages.flatMap(({ manifest }) =>
      Object.keys(manifest.exports as object)
        .filter((subpath) => subpath !== './package.json')
        .map((subpath) => manifest.name + subpath.slice(1)),
    );
    expect(entries).toEqual(expect.arrayContaining(['@nest-jsonrpc/server', '@nest-jsonrpc/server/testing', '@nest-jsonrpc/server/terminus', '@nest-jsonrpc/client/codegen', '@nest-jsonrpc/codegen']));
    for (const node of ['node', node24]) {
      const result = spawnSync(node, ['entries.js', JSON.stringify(entries)], { cwd: app, encoding: 'utf8', timeout: 60_000 });
      expect(result.stderr).toBe('');
      expect(JSON.parse(result.stdout)).toEqual(Object.fromEntries(entries.map((entry) => [entry, { same: true, names: true }])));
    }
  }, 2 * MINUTES);

  it.each(['20.18', '22.11'])('on Node %s (no require(esm)), require() of each package throws one error naming the Node versions needed', (release) => {
    const node = join(nodeReleaseHome(root, release), 'bin/node');
    const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
    expect(version.startsWith(`v${release}.`)).toBe(true);
    for (const { manifest } of packages) {
      const result = spawnSync(node, ['-e', `require(${JSON.stringify(manifest.name)})`], { cwd: app, encoding: 'utf8' });
      expect(result.status).toBe(1);
      const firstLine = result.stderr.split('\n').find((line) => line.startsWith('Error'));
      expect(firstLine).toBe(
        `Error: ${manifest.name} is an ES module package. A CommonJS app loads it with require(), which needs Node.js ${ENGINES} ` +
          `(this is Node.js ${version}). Upgrade Node.js, or load ${manifest.name} with import().`,
      );
    }
  }, 2 * MINUTES);
});
