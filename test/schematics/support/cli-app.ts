import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { run } from '../../support/processes.js';
import { packLibraries, type PackedPackage } from '../../support/workspace-packs.js';
import { startScopedRegistry, type ScopedRegistry } from './scoped-registry.js';
import { prepareToolchain, type Toolchain } from './toolchain.js';

const MINUTES = 60_000;

/** What an e2e test file of the Nest CLI works with; filled in before its first test. */
export interface CliE2e {
  /** The scratch folder the app is made in (as `<scratch>/app`), removed after the tests. */
  scratch: string;
  app: CliApp;
  packages: PackedPackage[];
  registry: ScopedRegistry;
}

/**
 * Sets up an e2e test file of the Nest CLI: a scratch folder, the cached Node 24 and @nestjs/cli
 * 12, every library packed and served by a local registry for our scope. Cleans up after the
 * tests and prints each step's time under `label`.
 */
export function setUpCliE2e(root: string, label: string): CliE2e {
  const e2e = {} as CliE2e;
  beforeAll(async () => {
    e2e.scratch = mkdtempSync(join(tmpdir(), 'nest-jsonrpc-cli-e2e-'));
    const started = Date.now();
    e2e.app = new CliApp(join(e2e.scratch, 'app'), await prepareToolchain(root));
    e2e.app.timings.push(`Node 24 + @nestjs/cli 12 (cached after the first run): ${((Date.now() - started) / 1000).toFixed(1)} s`);
    e2e.packages = await e2e.app.timed('npm pack libs/*', () => packLibraries(root, e2e.scratch));
    e2e.registry = await startScopedRegistry(e2e.packages);
  }, 10 * MINUTES);
  afterAll(async () => {
    e2e.app?.stop();
    await e2e.registry?.close();
    if (e2e.scratch) rmSync(e2e.scratch, { recursive: true, force: true });
    process.stdout.write(`nest CLI e2e, ${label} (${e2e.app?.toolchain.nodeVersion}) timings:\n  ${e2e.app?.timings.join('\n  ')}\n`);
  });
  return e2e;
}

/**
 * An app made by the Nest CLI in a scratch folder, driven as its user drives it: commands in the
 * app with the cached Node 24 first on PATH, the app's own `nest`, its files, and the built app
 * started on a free port. Each step can be timed, for the timings the e2e tests print.
 */
export class CliApp {
  readonly timings: string[] = [];
  private server: ChildProcess | undefined;

  constructor(
    readonly dir: string,
    readonly toolchain: Toolchain,
  ) {}

  async timed<T>(step: string, work: () => Promise<T>): Promise<T> {
    const started = Date.now();
    try {
      return await work();
    } finally {
      this.timings.push(`${step}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
    }
  }

  /** A command in the app; resolves its output, rejects with it on a non-zero exit. */
  run(command: string, ...args: string[]): Promise<string> {
    return run(command, args, { cwd: this.dir, env: this.toolchain.env }).then((r) => r.output);
  }

  /** The app's own `nest` (what `npx nest` runs), as a user of the generated app does. */
  nest(...args: string[]): Promise<string> {
    return this.run(join(this.dir, 'node_modules/.bin/nest'), ...args);
  }

  read(path: string): string {
    return readFileSync(join(this.dir, path), 'utf8');
  }

  /** Every file of the app outside node_modules and dist, for before/after comparisons. */
  sourceSnapshot(): Record<string, string> {
    const files: Record<string, string> = {};
    const walk = (directory: string) => {
      for (const entry of readdirSync(join(this.dir, directory), { withFileTypes: true })) {
        const path = directory ? `${directory}/${entry.name}` : entry.name;
        if (entry.isDirectory()) {
          if (!['node_modules', 'dist'].includes(entry.name)) walk(path);
        } else if (entry.name !== 'package-lock.json' && !entry.name.endsWith('.tsbuildinfo')) {
          files[path] = this.read(path);
        }
      }
    };
    walk('');
    return files;
  }

  /** Starts `node dist/main.js` (what `start:prod` runs) on a free port; resolves the port once it accepts connections. */
  async start(): Promise<number> {
    const port = await freePort();
    const server = spawn('node', ['dist/main.js'], { cwd: this.dir, env: { ...this.toolchain.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
    this.server = server;
    let log = '';
    const collect = (chunk: Buffer) => (log += stripVTControlCharacters(String(chunk)));
    server.stdout!.on('data', collect);
    server.stderr!.on('data', collect);
    // Nest logs "successfully started" before Fastify listens: wait for the port itself (on either platform).
    await acceptsConnections(port, server, () => log);
    return port;
  }

  stop(): void {
    if (this.server?.pid && this.server.exitCode === null) this.server.kill('SIGKILL');
  }
}

/** The generated folders pass the app's own lint (oxlint, type-aware) and Prettier, as `nest new` configured them. */
export async function expectGeneratedCodeToPassLint(app: CliApp): Promise<void> {
  const lint = await app.run('npm', 'run', 'lint');
  expect(lint).toMatch(/Found 0 warnings and 0 errors/);
  const prettier = await app.run(join(app.dir, 'node_modules/.bin/prettier'), '--check', 'src/hello', 'src/feed');
  expect(prettier).toContain('All matched files use Prettier code style!');
}

/**
 * What `nest g rpc hello` and `nest g rpc feed --type stream` generate, answering over HTTP in the
 * started app, and the template's own controller still answering (on Express or Fastify).
 */
export async function expectGeneratedMethodsToAnswer(port: number): Promise<void> {
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

  const home = await fetch(`http://127.0.0.1:${port}/`);
  expect(await home.text()).toBe('Hello World!');
}

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
