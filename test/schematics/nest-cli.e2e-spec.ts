/**
 * A new user's first steps, for real: `nest new` with @nestjs/cli 12 on Node 24, then
 * `nest add @nest-jsonrpc/server` (the packed tarballs, served by a local registry for our scope so
 * the CLI's own install step runs too) and `nest g rpc ...`; then the app's own build, tests, e2e
 * tests and lint; then the app is started and its generated methods are called with fetch.
 *
 * Needs only the npm registry. Node 24 and the CLI are cached in node_modules/.cache between runs;
 * see docs/cli.md for timings.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stripVTControlCharacters } from 'node:util';
import { run } from './support/processes.js';
import { startScopedRegistry, type ScopedRegistry } from './support/scoped-registry.js';
import { prepareToolchain, type Toolchain } from './support/toolchain.js';
import { packLibraries, type PackedPackage } from './support/workspace-packs.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const MINUTES = 60_000;

let scratch: string;
let app: string;
let toolchain: Toolchain;
let packages: PackedPackage[];
let registry: ScopedRegistry | undefined;
let server: ChildProcess | undefined;
const timings: string[] = [];

async function timed<T>(step: string, work: () => Promise<T>): Promise<T> {
  const started = Date.now();
  try {
    return await work();
  } finally {
    timings.push(`${step}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
}

/** A command in the app, with Node 24 first on PATH. */
function inApp(command: string, ...args: string[]): Promise<string> {
  return run(command, args, { cwd: app, env: toolchain.env }).then((r) => r.output);
}

/** The app's own `nest` (what `npx nest` runs), as a user of the generated app does. */
function nest(...args: string[]): Promise<string> {
  return inApp(join(app, 'node_modules/.bin/nest'), ...args);
}

function read(path: string): string {
  return readFileSync(join(app, path), 'utf8');
}

/** Every file of the app outside node_modules and dist, for before/after comparisons. */
function sourceSnapshot(): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (directory: string) => {
    for (const entry of readdirSync(join(app, directory), { withFileTypes: true })) {
      const path = directory ? `${directory}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (!['node_modules', 'dist'].includes(entry.name)) walk(path);
      } else if (entry.name !== 'package-lock.json' && !entry.name.endsWith('.tsbuildinfo')) {
        files[path] = read(path);
      }
    }
  };
  walk('');
  return files;
}

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'nest-jsonrpc-cli-e2e-'));
  app = join(scratch, 'app');
  toolchain = await timed('Node 24 + @nestjs/cli 12 (cached after the first run)', () => prepareToolchain(root));
  packages = await timed('npm pack libs/*', () => packLibraries(root, scratch));
  registry = await startScopedRegistry(packages);
}, 10 * MINUTES);

afterAll(async () => {
  if (server?.pid && server.exitCode === null) server.kill('SIGKILL');
  await registry?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
  process.stdout.write(`nest CLI e2e (${toolchain?.nodeVersion}) timings:\n  ${timings.join('\n  ')}\n`);
});

describe('from `nest new` to a tested JSON-RPC method in two commands (Node 24, @nestjs/cli 12)', () => {
  it('nest new writes the ESM, vitest, Express template the schematics expect', async () => {
    await timed('nest new', () => run(toolchain.nest, ['new', 'app', '--package-manager', 'npm', '--skip-git'], { cwd: scratch, env: toolchain.env }));
    const pkg = JSON.parse(read('package.json'));
    expect(pkg.type).toBe('module');
    expect(pkg.scripts.test).toBe('vitest run');
    expect(Object.keys(pkg.dependencies)).toContain('@nestjs/platform-express');
    expect(read('src/main.ts')).toContain('const app = await NestFactory.create(AppModule);\n  await app.listen(process.env.PORT ?? 3000);');
    // Our packages come from the local registry; everything else from the public one.
    writeFileSync(join(app, '.npmrc'), `@nest-jsonrpc:registry=${registry!.url}\n`);
  }, 10 * MINUTES);

  it('nest add @nest-jsonrpc/server installs the package, sets the app up and installs the peers', async () => {
    const output = await timed('nest add @nest-jsonrpc/server', () => nest('add', '@nest-jsonrpc/server'));
    expect(output).toContain('@nest-jsonrpc/server is set up:\n');
    expect(output).toContain('  - src/main.ts: creates the app on FastifyAdapter (NestFastifyApplication) instead of Express\n');
    expect(output).toContain('  - src/app.module.ts: imports JsonRpcModule.forRoot()\n');
    expect(output).toMatch(/Packages installed successfully/);
    // Installed from the packed tarball (schematics included), with every peer.
    const installed = JSON.parse(read('node_modules/@nest-jsonrpc/server/package.json'));
    expect(installed.version).toBe(packages.find((p) => p.manifest.name === '@nest-jsonrpc/server')!.manifest.version);
    expect(existsSync(join(app, 'node_modules/@nest-jsonrpc/server/dist/schematics/collection.json'))).toBe(true);
    for (const peer of ['@nestjs/platform-fastify', 'fastify', '@nestjs/throttler', 'class-validator', 'class-transformer']) {
      expect(existsSync(join(app, 'node_modules', peer, 'package.json'))).toBe(true);
    }
    expect(read('src/main.ts')).toBe(`import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule } from './app.module.js';

async function bootstrap() {
  const app = await NestFactory.create<NestFastifyApplication>(AppModule, new FastifyAdapter());
  await app.listen(process.env.PORT ?? 3000);
}
await bootstrap();
`);
  }, 10 * MINUTES);

  it('nest g rpc hello -c @nest-jsonrpc/server writes the method, its DTOs and its spec', async () => {
    const output = await timed('nest g rpc hello -c @nest-jsonrpc/server', () => nest('g', 'rpc', 'hello', '-c', '@nest-jsonrpc/server'));
    expect(output).toContain('CREATE src/hello/hello.rpc.ts');
    expect(output).toContain('CREATE src/hello/hello.dto.ts');
    expect(output).toContain('CREATE src/hello/hello.rpc.spec.ts');
    expect(output).toContain('UPDATE src/app.module.ts');
    expect(read('src/app.module.ts')).toContain('providers: [AppService, HelloRpc],');
  }, 5 * MINUTES);

  it('through the collection nest add set in nest-cli.json: nest g rpc feed --type stream, and Nest’s own nest g service', async () => {
    const stream = await nest('g', 'rpc', 'feed', '--type', 'stream');
    expect(stream).toContain('CREATE src/feed/feed.rpc.ts');
    expect(read('src/app.module.ts')).toContain('imports: [JsonRpcModule.forRoot({ stream: { enabled: true } })],');
    const service = await nest('g', 'service', 'greeting');
    expect(service).toContain('CREATE src/greeting/greeting.service.ts');
  }, 5 * MINUTES);

  it('--dry-run writes nothing', async () => {
    const before = sourceSnapshot();
    const output = await nest('g', 'rpc', 'billing/charge', '--dry-run');
    expect(output).toContain('CREATE src/billing/charge/charge.rpc.ts');
    expect(output).toContain('Dry run enabled. No files written to disk.');
    expect(sourceSnapshot()).toEqual(before);
  }, 5 * MINUTES);

  it('nest add a second time changes nothing', async () => {
    const before = sourceSnapshot();
    const output = await nest('add', '@nest-jsonrpc/server', '--skip-install');
    expect(output).toContain('@nest-jsonrpc/server is set up already: nothing to change.');
    expect(sourceSnapshot()).toEqual(before);
  }, 5 * MINUTES);

  it('the app builds, and its own tests pass: the generated specs, the template’s, and its e2e on Fastify', async () => {
    await timed('npm run build', () => inApp('npm', 'run', 'build'));
    expect(existsSync(join(app, 'dist/main.js'))).toBe(true);
    const unit = await timed('npm test (vitest)', () => inApp('npm', 'test'));
    for (const spec of ['src/hello/hello.rpc.spec.ts', 'src/feed/feed.rpc.spec.ts', 'src/greeting/greeting.service.spec.ts', 'src/app.controller.spec.ts']) {
      expect(unit).toContain(`✓ ${spec}`);
    }
    expect(unit).toMatch(/Tests\s+6 passed \(6\)/);
    const e2e = await timed('npm run test:e2e', () => inApp('npm', 'run', 'test:e2e'));
    expect(e2e).toMatch(/Tests\s+1 passed \(1\)/);
  }, 10 * MINUTES);

  it('the generated code passes the app’s lint (oxlint, type-aware) and Prettier', async () => {
    const lint = await inApp('npm', 'run', 'lint');
    expect(lint).toMatch(/Found 0 warnings and 0 errors/);
    const prettier = await inApp(join(app, 'node_modules/.bin/prettier'), '--check', 'src/hello', 'src/feed');
    expect(prettier).toContain('All matched files use Prettier code style!');
  }, 5 * MINUTES);

  it('the started app answers the generated methods over HTTP', async () => {
    const port = await freePort();
    server = spawn('node', ['dist/main.js'], { cwd: app, env: { ...toolchain.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
    let log = '';
    const collect = (chunk: Buffer) => (log += stripVTControlCharacters(String(chunk)));
    server.stdout!.on('data', collect);
    server.stderr!.on('data', collect);
    // Nest logs "successfully started" before Fastify listens: wait for the port itself.
    await acceptsConnections(port, server, () => log);
    const post = (path: string, body: unknown) =>
      fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

    const hello = await post('/rpc', { jsonrpc: '2.0', method: 'hello', params: { name: 'Ada' }, id: 1 });
    expect({ status: hello.status, body: await hello.json() }).toEqual({ status: 200, body: { jsonrpc: '2.0', result: { message: 'Hello, Ada!' }, id: 1 } });

    const invalid = await post('/rpc', { jsonrpc: '2.0', method: 'hello', params: { name: 'x'.repeat(101) }, id: 2 });
    expect(await invalid.json()).toEqual({
      jsonrpc: '2.0',
      error: {
        code: -32602,
        message: 'Invalid params',
        data: [{ path: 'name', message: 'name must be shorter than or equal to 100 characters', code: 'maxLength' }],
      },
      id: 2,
    });

    const feed = await post('/rpc/stream', { jsonrpc: '2.0', method: 'feed', params: { count: 2 }, id: 3 });
    expect(feed.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
    expect(await feed.text()).toBe('{"index":0,"message":"row 1 of 2"}\n{"index":1,"message":"row 2 of 2"}\n');

    // The template's own controller still answers, now on Fastify.
    const home = await fetch(`http://127.0.0.1:${port}/`);
    expect(await home.text()).toBe('Hello World!');
  }, 2 * MINUTES);
});

/** Resolves once 127.0.0.1:port accepts a connection; rejects if the process exits first or after 30 s. */
async function acceptsConnections(port: number, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the app exited with ${child.exitCode}:\n${log()}`);
    if (Date.now() > deadline) throw new Error(`the app did not listen on ${port} within 30 s:\n${log()}`);
    const connected = await new Promise<boolean>((done) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        done(true);
      });
      socket.once('error', () => done(false));
    });
    if (connected) return;
    await new Promise((retry) => setTimeout(retry, 100));
  }
}

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolvePort(port));
    });
  });
}
