/**
 * The package as users get it: `npm pack` libs/server, install the tarball into a scratch Nest app
 * outside the workspace, compile that app against the installed typings, run it, call a method.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const serverLib = join(root, 'libs/server');
const clientLib = join(root, 'libs/client');
const tsc = join(root, 'node_modules/typescript/bin/tsc');

const APP_SOURCE = `
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { IsNumber } from 'class-validator';
// The public API of DESIGN §3, imported exactly as documented.
import {
  JsonRpcModule, RpcMethod, RpcStream, StreamFormat, RpcCache, RpcRateLimit, RpcMcp,
  RpcParams, RpcParam, RpcCtx, RpcContext,
  RpcException, RpcParseErrorException, RpcInvalidRequestException, RpcMethodNotFoundException,
  RpcInvalidParamsException, RpcInternalErrorException, RpcAccessDeniedException,
  RpcNotFoundException, RpcRateLimitExceededException, RpcRequestTooLargeException,
} from '@nest-jsonrpc/server';
const publicApi = [RpcStream, StreamFormat, RpcCache, RpcRateLimit, RpcMcp, RpcParams, RpcCtx, RpcParseErrorException,
  RpcInvalidRequestException, RpcMethodNotFoundException, RpcInvalidParamsException, RpcInternalErrorException,
  RpcAccessDeniedException, RpcNotFoundException, RpcRateLimitExceededException, RpcRequestTooLargeException];
if (publicApi.some((value) => value === undefined)) throw new Error('a public API name is missing at runtime');
import { JsonRpcClient, JsonRpcError } from '@nest-jsonrpc/client';

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
}

@Module({ imports: [JsonRpcModule.forRoot()], providers: [Calculator] })
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

function peerVersions(): Record<string, string> {
  const read = (name: string) => JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')).version as string;
  const names = ['@types/node', '@nestjs/throttler', '@nestjs/common', '@nestjs/core', '@nestjs/platform-fastify', 'fastify', 'class-validator', 'class-transformer', 'reflect-metadata', 'rxjs'];
  return Object.fromEntries(names.map((n) => [n, read(n)]));
}

describe('npm pack @nest-jsonrpc/server and @nest-jsonrpc/client into a fresh Nest app', () => {
  let scratch: string;
  let child: ChildProcess | undefined;

  beforeAll(() => {
    for (const lib of [serverLib, clientLib]) {
      if (!existsSync(join(lib, 'dist/index.js'))) execFileSync('node', [tsc, '-b', lib], { cwd: root, stdio: 'inherit' });
    }
    scratch = mkdtempSync(join(tmpdir(), 'nest-jsonrpc-pack-'));
  });

  afterAll(() => {
    child?.kill('SIGKILL');
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it('installs, type-checks, boots and answers over HTTP', async () => {
    for (const lib of [serverLib, clientLib]) execFileSync('npm', ['pack', '--pack-destination', scratch, '--silent'], { cwd: lib, encoding: 'utf8' });
    const tarball = readdirSync(scratch).find((f) => f.startsWith('nest-jsonrpc-server-'));
    const clientTarball = readdirSync(scratch).find((f) => f.startsWith('nest-jsonrpc-client-'));
    expect(tarball).toMatch(/^nest-jsonrpc-server-\d+\.\d+\.\d+\.tgz$/);
    expect(clientTarball).toMatch(/^nest-jsonrpc-client-\d+\.\d+\.\d+\.tgz$/);

    const app = join(scratch, 'app');
    mkdirSync(join(app, 'src'), { recursive: true });
    writeFileSync(join(app, 'package.json'), JSON.stringify({
      name: 'scratch-app', private: true, type: 'module',
      dependencies: { '@nest-jsonrpc/server': `file:../${tarball}`, '@nest-jsonrpc/client': `file:../${clientTarball}`, ...peerVersions() },
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
    // The installed package is the packed one, not a link into the workspace.
    expect(existsSync(join(app, 'node_modules/@nest-jsonrpc/server/dist/index.d.ts'))).toBe(true);
    expect(existsSync(join(app, 'node_modules/@nest-jsonrpc/server/src'))).toBe(false);
    expect(existsSync(join(app, 'node_modules/@nest-jsonrpc/client/dist/index.d.ts'))).toBe(true);
    // The client must run in browsers: its built code imports no Node built-in.
    const clientJs = readdirSync(join(app, 'node_modules/@nest-jsonrpc/client/dist'), { recursive: true })
      .filter((f) => String(f).endsWith('.js'))
      .map((f) => readFileSync(join(app, 'node_modules/@nest-jsonrpc/client/dist', String(f)), 'utf8'));
    for (const code of clientJs) expect(code).not.toMatch(/from ['"](node:|fs|path|http|https|stream|buffer|crypto|events|util)['"]/);

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
  }, 240_000);
});
