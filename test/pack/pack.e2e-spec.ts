/**
 * The packages as users get them: `npm pack` every library of the workspace (libs/*); each tarball
 * is readable on its own (README, LICENSE, where it comes from); the browser client installs alone,
 * without the code generator; and installed into a scratch ESM Nest app outside the workspace,
 * the app compiles against the installed typings, runs, answers calls, and the packed generator's
 * bin writes a typed client from the running app. The CommonJS side: commonjs.e2e-spec.ts.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { workspaceVersions } from '../support/workspace-packs.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
/** Every publishable library of the workspace: `libs/*` in the root package.json's workspaces. */
const libs = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).workspaces as string[])
  .filter((w) => w.startsWith('libs/'))
  .map((w) => ({ dir: join(root, w), name: JSON.parse(readFileSync(join(root, w, 'package.json'), 'utf8')).name as string }));
/** The libraries that must run in browsers: their built code imports no Node built-in and uses no Buffer. */
const BROWSER_SAFE = ['@nest-jsonrpc/protocol', '@nest-jsonrpc/client'];
const tsc = join(root, 'node_modules/typescript/bin/tsc');

const APP_SOURCE = `
import 'reflect-metadata';
import { createParamDecorator, Injectable, Module, type ExecutionContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { IsNumber } from 'class-validator';
// The public API of README.md, imported exactly as documented.
import {
  JsonRpcModule, RpcMethod, RpcStream, StreamFormat, RpcCache, RpcRateLimit, RpcMcp,
  RpcParams, RpcParam, RpcCtx, RpcContext, getRpcContext,
  RpcException, RpcParseErrorException, RpcInvalidRequestException, RpcMethodNotFoundException,
  RpcInvalidParamsException, RpcInternalErrorException, RpcAccessDeniedException,
  RpcNotFoundException, RpcRateLimitExceededException, RpcRequestTooLargeException,
  SqliteStreamStore, MemoryStreamStore, RedisStreamStore, resultChunks, progress,
  RpcCacheInvalidator, RpcThrottlerGuard, RpcExceptionMapper,
  type JsonRpcOptionsFactory, type JsonRpcModuleOptions,
} from '@nest-jsonrpc/server';
import { RpcErrorCode, isErrorObject } from '@nest-jsonrpc/protocol';
const publicApi = [RpcStream, StreamFormat, RpcCache, RpcRateLimit, RpcMcp, RpcParams, RpcCtx, getRpcContext, RpcParseErrorException,
  RpcInvalidRequestException, RpcMethodNotFoundException, RpcInvalidParamsException, RpcInternalErrorException,
  RpcAccessDeniedException, RpcNotFoundException, RpcRateLimitExceededException, RpcRequestTooLargeException,
  SqliteStreamStore, MemoryStreamStore, RedisStreamStore, resultChunks, progress, RpcCacheInvalidator, RpcThrottlerGuard,
  RpcExceptionMapper, RpcErrorCode, isErrorObject];
if (publicApi.some((value) => value === undefined)) throw new Error('a public API name is missing at runtime');
import { JsonRpcClient, JsonRpcError } from '@nest-jsonrpc/client';

interface AppUser { id: number; name: string }
/** A controller-style custom parameter decorator, on an RPC handler. */
const CurrentUser = createParamDecorator((_data: unknown, ctx: ExecutionContext) => ctx.switchToHttp().getRequest().user as AppUser | undefined);

/** forRootAsync({ useClass }) with Nest's options-factory naming. */
@Injectable()
class RpcOptions implements JsonRpcOptionsFactory {
  createJsonRpcOptions(): JsonRpcModuleOptions {
    return { maxBatchSize: 10, openrpc: { enabled: true, info: { title: 'Scratch', version: '1.0.0' } }, explorer: { enabled: true } };
  }
}

class AddDto {
  @IsNumber() a!: number;
  @IsNumber() b!: number;
}

@Injectable()
class Calculator {
  @RpcMethod('math.add')
  add(p: AddDto, ctx: RpcContext) { return { sum: p.a + p.b, method: ctx.method }; }

  @RpcMethod('math.subtract')
  subtract(@RpcParam('minuend') a: number, @RpcParam('subtrahend') b: number) { return a - b; }

  @RpcMethod('fail')
  fail() { throw new RpcException('Nope', { code: 4000, data: { why: 'because' } }); }

  @RpcMethod('whoami')
  whoami(@CurrentUser() user: AppUser | undefined, @RpcCtx() ctx: RpcContext<AppUser>) {
    // RpcContext<TUser> types ctx.user without a cast.
    const id: number | undefined = ctx.user?.id;
    return { user: user ?? null, id: id ?? null, transport: ctx.transport };
  }
}

@Module({ imports: [JsonRpcModule.forRootAsync({ useClass: RpcOptions })], providers: [Calculator] })
class AppModule {}

const app = await NestFactory.create<NestFastifyApplication>(AppModule, new FastifyAdapter(), { logger: false });
await app.listen(0, '127.0.0.1');
const port = (app.getHttpServer().address() as { port: number }).port;
// The packed client, against the packed server.
const client = new JsonRpcClient({ url: \`http://127.0.0.1:\${port}/rpc\` });
const sum = await client.call<{ sum: number }>('math.add', { a: 40, b: 2 });
const settled = await client.batch([{ method: 'math.subtract', params: [5, 3] }, { method: 'fail' }]);
const failure = settled[1].status === 'rejected' ? settled[1].reason : undefined;
console.log('CLIENT=' + JSON.stringify({ sum: sum.sum, first: settled[0], failure: failure instanceof JsonRpcError ? { code: failure.code, data: failure.data } : null }));
console.log('PORT=' + port);
`;

const PEERS = ['@types/node', '@nestjs/throttler', '@nestjs/common', '@nestjs/core', '@nestjs/platform-fastify', 'fastify', 'class-validator', 'class-transformer', 'reflect-metadata', 'rxjs'];
const REPOSITORY = 'https://github.com/nest-jsonrpc/nest-jsonrpc';

/** `npm pack` of every library into `destination`: package name -> tarball file name. */
function packAll(destination: string): Record<string, string> {
  const tarballs: Record<string, string> = {};
  for (const lib of libs) {
    const [packed] = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', destination, '--loglevel=error'], { cwd: lib.dir, encoding: 'utf8' })) as { filename: string }[];
    tarballs[lib.name] = packed.filename;
  }
  return tarballs;
}

/** The files of a tarball, and its package.json. */
function tarballContents(file: string): { files: string[]; manifest: Record<string, any> } {
  const files = execFileSync('tar', ['tzf', file], { encoding: 'utf8' }).split('\n').filter(Boolean).map((f) => f.replace(/^package\//, ''));
  const manifest = JSON.parse(execFileSync('tar', ['xzf', file, '-O', 'package/package.json'], { encoding: 'utf8' }));
  return { files, manifest };
}

describe('every tarball, on its own', () => {
  let scratch: string;
  let tarballs: Record<string, string>;

  beforeAll(() => {
    for (const lib of libs) {
      if (!existsSync(join(lib.dir, 'dist/require/index.cjs'))) throw new Error(`${lib.dir}/dist is not built: run npm run build first`);
    }
    scratch = mkdtempSync(join(tmpdir(), 'nest-jsonrpc-tarballs-'));
    tarballs = packAll(scratch);
  });
  afterAll(() => {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it('has a README (install, an example, the docs), a LICENSE, and says where it comes from', () => {
    expect(Object.keys(tarballs).sort()).toEqual(['@nest-jsonrpc/client', '@nest-jsonrpc/codegen', '@nest-jsonrpc/llm', '@nest-jsonrpc/protocol', '@nest-jsonrpc/server']);
    for (const [name, file] of Object.entries(tarballs)) {
      const { files, manifest } = tarballContents(join(scratch, file));
      expect([name, files.filter((f) => !f.includes('/')).sort()]).toEqual([name, expect.arrayContaining(['LICENSE', 'README.md', 'package.json'])]);
      expect(files.some((f) => f.startsWith('src/') || f.endsWith('.spec.js') || f.endsWith('.tsbuildinfo'))).toBe(false);
      const readme = execFileSync('tar', ['xzf', join(scratch, file), '-O', 'package/README.md'], { encoding: 'utf8' });
      expect([name, readme.startsWith(`# ${name}\n`), readme.includes(`npm install `), readme.includes('```ts'), readme.includes(REPOSITORY)]).toEqual([name, true, true, true, true]);
      expect(execFileSync('tar', ['xzf', join(scratch, file), '-O', 'package/LICENSE'], { encoding: 'utf8' })).toMatch(/^MIT License\n/);
      const directory = `libs/${name.split('/')[1]}`;
      expect({ name, license: manifest.license, repository: manifest.repository, homepage: manifest.homepage, bugs: manifest.bugs }).toEqual({
        name,
        license: 'MIT',
        repository: { type: 'git', url: `git+${REPOSITORY}.git`, directory },
        homepage: `${REPOSITORY}/tree/main/${directory}#readme`,
        bugs: { url: `${REPOSITORY}/issues` },
      });
      expect(manifest.keywords.length).toBeGreaterThan(3);
    }
  });

  it('the browser client installs with its two dependencies and nothing else: no code generator', () => {
    const app = join(scratch, 'browser-app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({
      name: 'browser-app', private: true, type: 'module',
      // The protocol's tarball stands in for the registry (the packages are not published yet).
      dependencies: { '@nest-jsonrpc/client': `file:../${tarballs['@nest-jsonrpc/client']}`, '@nest-jsonrpc/protocol': `file:../${tarballs['@nest-jsonrpc/protocol']}` },
    }));
    execFileSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: app, stdio: 'inherit' });
    const lock = JSON.parse(readFileSync(join(app, 'package-lock.json'), 'utf8')) as { packages: Record<string, unknown> };
    expect(Object.keys(lock.packages).filter((p) => p !== '').sort()).toEqual([
      'node_modules/@nest-jsonrpc/client',
      'node_modules/@nest-jsonrpc/protocol',
      'node_modules/eventsource-parser',
    ]);
    // Its ./codegen subpath is still exported, and says what it needs.
    const missing = execFileSync('node', ['--input-type=module', '-e', "import('@nest-jsonrpc/client/codegen').catch((e) => console.log(e.code, e.message.split(' imported from')[0]))"], { cwd: app, encoding: 'utf8' });
    expect(missing).toBe("ERR_MODULE_NOT_FOUND Cannot find package '@nest-jsonrpc/codegen'\n");
  }, 240_000);
});

describe('npm pack every @nest-jsonrpc library into a fresh Nest app', () => {
  let scratch: string;
  let child: ChildProcess | undefined;

  beforeAll(() => {
    for (const lib of libs) {
      if (!existsSync(join(lib.dir, 'dist/require/index.cjs'))) throw new Error(`${lib.dir}/dist is not built: run npm run build first`);
    }
    scratch = mkdtempSync(join(tmpdir(), 'nest-jsonrpc-pack-'));
  });

  afterAll(() => {
    child?.kill('SIGKILL');
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it('installs, type-checks, boots and answers over HTTP', async () => {
    expect(libs.map((l) => l.name)).toEqual(expect.arrayContaining(['@nest-jsonrpc/protocol', '@nest-jsonrpc/server', '@nest-jsonrpc/client', '@nest-jsonrpc/codegen']));
    const tarballs = Object.fromEntries(Object.entries(packAll(scratch)).map(([name, file]) => [name, `file:../${file}`]));

    const app = join(scratch, 'app');
    mkdirSync(join(app, 'src'), { recursive: true });
    writeFileSync(join(app, 'package.json'), JSON.stringify({
      name: 'scratch-app', private: true, type: 'module',
      dependencies: { ...tarballs, ...workspaceVersions(root, PEERS) },
      // As a Nest CLI app has it: a dev dependency that must stay out of a production install.
      devDependencies: workspaceVersions(root, ['typescript']),
    }, null, 2));
    writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({
      compilerOptions: {
        target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true,
        experimentalDecorators: true, emitDecoratorMetadata: true, skipLibCheck: false,
        outDir: 'dist', rootDir: 'src', types: ['node'],
      },
      include: ['src'],
    }));
    writeFileSync(join(app, 'src/main.ts'), APP_SOURCE);
    execFileSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: app, stdio: 'inherit' });
    // The installed packages are the packed ones, not links into the workspace.
    for (const lib of libs) {
      const installed = join(app, 'node_modules', lib.name);
      expect(existsSync(join(installed, 'dist/index.d.ts'))).toBe(true);
      expect(existsSync(join(installed, 'src'))).toBe(false);
    }
    // Nothing of ours turns the app's dev-only TypeScript into a production dependency: an optional
    // peer the app has as a dev dependency is `devOptional` in its lockfile, which `npm ci
    // --omit=dev` installs (the schematics' devkit and TypeScript, ~31 MB, in every image).
    const lock = JSON.parse(readFileSync(join(app, 'package-lock.json'), 'utf8'));
    expect([lock.packages['node_modules/typescript'].dev, lock.packages['node_modules/typescript'].devOptional]).toEqual([true, undefined]);
    // The server found the protocol and client packages it depends on in the app, not copies of its own.
    expect(existsSync(join(app, 'node_modules/@nest-jsonrpc/server/node_modules'))).toBe(false);
    // The client and the protocol must run in browsers: no Node built-in, no Buffer.
    for (const name of BROWSER_SAFE) {
      const dist = join(app, 'node_modules', name, 'dist');
      const code = readdirSync(dist, { recursive: true })
        .filter((f) => String(f).endsWith('.js'))
        .map((f) => readFileSync(join(dist, String(f)), 'utf8'));
      expect(code.length).toBeGreaterThan(0);
      for (const text of code) {
        expect(text).not.toMatch(/from ['"](node:|fs|path|http|https|stream|buffer|crypto|events|util)['"]/);
        expect(text).not.toMatch(/\bBuffer\./);
      }
    }

    execFileSync('node', [tsc, '-p', app], { cwd: app, stdio: 'inherit' });

    child = spawn('node', ['dist/main.js'], { cwd: app, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    const port = await new Promise<number>((resolvePort, reject) => {
      child!.stdout!.on('data', (d) => {
        out += d;
        const m = /PORT=(\d+)/.exec(out);
        if (m) resolvePort(Number(m[1]));
      });
      child!.once('exit', (code) => reject(new Error(`scratch app exited with ${code}`)));
    });
    expect(JSON.parse(/CLIENT=(.*)/.exec(out)![1])).toEqual({
      sum: 42,
      first: { status: 'fulfilled', value: 2 },
      failure: { code: 4000, data: { why: 'because' } },
    });
    const call = async (body: unknown) => {
      const res = await fetch(`http://127.0.0.1:${port}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: res.status, body: await res.json() };
    };
    expect(await call({ jsonrpc: '2.0', method: 'math.add', params: { a: 2, b: 3 }, id: 1 })).toEqual({
      status: 200, body: { jsonrpc: '2.0', result: { sum: 5, method: 'math.add' }, id: 1 },
    });
    expect(await call({ jsonrpc: '2.0', method: 'math.subtract', params: [42, 23], id: 2 })).toEqual({
      status: 200, body: { jsonrpc: '2.0', result: 19, id: 2 },
    });
    expect(await call({ jsonrpc: '2.0', method: 'math.add', params: { a: 'x', b: 3 }, id: 3 })).toEqual({
      status: 200,
      body: { jsonrpc: '2.0', error: { code: -32602, message: 'Invalid params', data: [{ path: 'a', message: 'a must be a number conforming to the specified constraints', code: 'isNumber' }] }, id: 3 },
    });
    expect(await call({ jsonrpc: '2.0', method: 'fail', id: 4 })).toEqual({
      status: 200, body: { jsonrpc: '2.0', error: { code: 4000, message: 'Nope', data: { why: 'because' } }, id: 4 },
    });
    expect(await call({ jsonrpc: '2.0', method: 'whoami', id: 5 })).toEqual({
      status: 200, body: { jsonrpc: '2.0', result: { user: null, id: null, transport: 'http' }, id: 5 },
    });
    // The options came from the useClass factory: maxBatchSize 10.
    const batch = await call(Array.from({ length: 11 }, (_, i) => ({ jsonrpc: '2.0', method: 'whoami', id: i })));
    expect(batch.body.error).toEqual({ code: -32600, message: 'Invalid Request: batch of 11 exceeds the limit of 10' });
    // Describe the API (README "Describe the API"): rpc.discover, the GET route, the explorer from the packed dist/explorer.
    const discovered = await call({ jsonrpc: '2.0', method: 'rpc.discover', id: 6 });
    expect(discovered.body.result).toMatchObject({ openrpc: '1.3.2', info: { title: 'Scratch', version: '1.0.0' }, servers: [{ url: `http://127.0.0.1:${port}/rpc` }] });
    expect(discovered.body.result.methods.map((m: { name: string }) => m.name)).toEqual(['math.add', 'math.subtract', 'fail', 'whoami']);
    const document = await fetch(`http://127.0.0.1:${port}/rpc/openrpc.json`);
    expect(await document.json()).toEqual(discovered.body.result);
    for (const [path, type] of [['/rpc/explorer', 'text/html'], ['/rpc/explorer/explorer.js', 'text/javascript'], ['/rpc/explorer/explorer.css', 'text/css']]) {
      const res = await fetch(`http://127.0.0.1:${port}${path}`);
      expect([path, res.status, res.headers.get('content-type')]).toEqual([path, 200, `${type}; charset=utf-8`]);
    }

    // The packed generator's bin (the README's command), against the running app; the typed client
    // it writes compiles against the packed client.
    const bin = join(app, 'node_modules/.bin/nest-jsonrpc-client');
    const generated = execFileSync(bin, ['generate', `http://127.0.0.1:${port}/rpc/openrpc.json`, '-o', 'src/api.ts'], { cwd: app, encoding: 'utf8' });
    expect(generated).toBe(`Wrote src/api.ts: 4 methods\n`);
    writeFileSync(join(app, 'src/use-api.ts'), `
import { JsonRpcClient } from '@nest-jsonrpc/client';
import { createRpcApi } from './api.js';
export const sum = (client: JsonRpcClient) => createRpcApi(client).math.add({ a: 1, b: 2 });
// @ts-expect-error a is a number
export const wrong = (client: JsonRpcClient) => createRpcApi(client).math.add({ a: 'one', b: 2 });
`);
    execFileSync('node', [tsc, '-p', app], { cwd: app, stdio: 'inherit' });
  }, 240_000);
});

const llmLib = join(root, 'libs/llm');

/** A consumer of the packed @nest-jsonrpc/llm, no Nest: a tool loop against a local fake Anthropic. */
const LLM_CONSUMER_SOURCE = `
import http from 'node:http';
// The @nest-jsonrpc/llm API of docs/llm.md, imported exactly as documented.
import {
  openAiChat, openAiResponses, anthropicMessages, geminiGenerateContent, bedrockConverseStream,
  ToolCallAccumulator, runToolLoop, toStreamRows, LlmProviderError,
  type LlmTool, type LlmStreamRow,
} from '@nest-jsonrpc/llm';

const publicApi = [openAiChat, openAiResponses, anthropicMessages, geminiGenerateContent, bedrockConverseStream, ToolCallAccumulator, runToolLoop, toStreamRows, LlmProviderError];
if (publicApi.some((value) => typeof value !== 'function')) throw new Error('a public API name is missing at runtime');
// The AWS event-stream codec and SigV4 signer load from the installed dependencies.
bedrockConverseStream({ region: 'us-east-1', credentials: { accessKeyId: 'a', secretAccessKey: 's' } });

const sse = (events: Array<[string, unknown]>) => events.map(([name, data]) => \`event: \${name}\\ndata: \${JSON.stringify(data)}\\n\\n\`).join('');
const turns = [
  sse([
    ['message_start', { type: 'message_start', message: { usage: { input_tokens: 10, output_tokens: 1 } } }],
    ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: 'add', input: {} } }],
    ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"a": 2, ' } }],
    ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '"b": 3}' } }],
    ['content_block_stop', { type: 'content_block_stop', index: 0 }],
    ['message_delta', { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 20 } }],
    ['message_stop', { type: 'message_stop' }],
  ]),
  sse([
    ['message_start', { type: 'message_start', message: { usage: { input_tokens: 40, output_tokens: 1 } } }],
    ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: '2 + 3 = 5' } }],
    ['message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 5 } }],
    ['message_stop', { type: 'message_stop' }],
  ]),
];
const seen: unknown[] = [];
const server = http.createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    seen.push({ path: req.url, key: req.headers['x-api-key'], body: JSON.parse(body) });
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(turns.shift());
  });
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const { port } = server.address() as { port: number };

const add: LlmTool = { name: 'add', description: 'Adds', parameters: { type: 'object' }, execute: (args: { a: number; b: number }) => args.a + args.b };
const rows: LlmStreamRow[] = [];
const provider = anthropicMessages({ apiKey: 'k', baseUrl: \`http://127.0.0.1:\${port}\` });
for await (const row of toStreamRows(runToolLoop({ provider, request: { model: 'm', messages: [{ role: 'user', content: 'add 2 and 3' }] }, tools: [add] }))) rows.push(row);
server.close();
console.log('ROWS=' + JSON.stringify(rows));
console.log('SEEN=' + JSON.stringify(seen.map((s: any) => [s.path, s.key, s.body.messages.length])));
`;

describe('npm pack @nest-jsonrpc/llm into a fresh app (no Nest)', () => {
  let scratch: string;

  beforeAll(() => {
    if (!existsSync(join(llmLib, 'dist/index.js'))) execFileSync('node', [tsc, '-b', llmLib], { cwd: root, stdio: 'inherit' });
    scratch = mkdtempSync(join(tmpdir(), 'nest-jsonrpc-llm-pack-'));
  });

  afterAll(() => {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it('installs, type-checks against the packed typings and runs a tool loop over HTTP', () => {
    execFileSync('npm', ['pack', '--pack-destination', scratch, '--silent'], { cwd: llmLib, encoding: 'utf8' });
    const tarball = readdirSync(scratch).find((f) => f.startsWith('nest-jsonrpc-llm-'));
    expect(tarball).toMatch(/^nest-jsonrpc-llm-\d+\.\d+\.\d+\.tgz$/);
    const app = join(scratch, 'app');
    mkdirSync(join(app, 'src'), { recursive: true });
    const typesNode = JSON.parse(readFileSync(join(root, 'node_modules/@types/node/package.json'), 'utf8')).version as string;
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'llm-consumer', private: true, type: 'module', dependencies: { '@nest-jsonrpc/llm': `file:../${tarball}`, '@types/node': typesNode } }, null, 2));
    writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: false, outDir: 'dist', rootDir: 'src', types: ['node'] },
      include: ['src'],
    }));
    writeFileSync(join(app, 'src/main.ts'), LLM_CONSUMER_SOURCE);
    execFileSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: app, stdio: 'inherit' });
    const installed = join(app, 'node_modules/@nest-jsonrpc/llm');
    expect(existsSync(join(installed, 'dist/index.d.ts'))).toBe(true);
    expect(existsSync(join(installed, 'README.md'))).toBe(true);
    expect(existsSync(join(installed, 'src'))).toBe(false);
    expect(readdirSync(join(installed, 'dist'), { recursive: true }).some((f) => String(f).endsWith('.spec.js'))).toBe(false);

    execFileSync('node', [tsc, '-p', app], { cwd: app, stdio: 'inherit' });
    const out = execFileSync('node', ['dist/main.js'], { cwd: app, encoding: 'utf8', timeout: 30_000 });
    expect(JSON.parse(/ROWS=(.*)/.exec(out)![1])).toEqual([
      { type: 'tool-call', id: 'toolu_1', name: 'add', arguments: { a: 2, b: 3 } },
      { type: 'finish', reason: 'tool-calls', usage: { inputTokens: 10, outputTokens: 20, totalTokens: 30 } },
      { type: 'tool-result', id: 'toolu_1', name: 'add', result: 5 },
      { delta: '2 + 3 = 5' },
      { type: 'finish', reason: 'stop', usage: { inputTokens: 40, outputTokens: 5, totalTokens: 45 } },
    ]);
    expect(JSON.parse(/SEEN=(.*)/.exec(out)![1])).toEqual([
      ['/v1/messages', 'k', 1],
      ['/v1/messages', 'k', 3],
    ]);
  }, 240_000);
});
