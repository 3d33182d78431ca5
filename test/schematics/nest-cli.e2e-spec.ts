/**
 * A new user's first steps, for real, on the ESM template (`nest new`'s default: ESM + vitest):
 * `nest new` with @nestjs/cli 12 on Node 24, then `nest add @nest-jsonrpc/server` — the app stays on
 * Express, Nest's default (the CommonJS run switches to Fastify with --platform fastify) — (the packed
 * tarballs, served by a local registry for our scope so the CLI's own install step runs too) and
 * `nest g rpc ...`; then the app's own build, tests, e2e tests and lint; then the app is started
 * and its generated methods are called with fetch. The CommonJS template: nest-cli-cjs.e2e-spec.ts.
 *
 * Needs only the npm registry. Node 24 and the CLI are cached in node_modules/.cache between runs;
 * see docs/cli.md for timings.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from '../support/processes.js';
import { NEST_NEW_APP } from './fixtures/nest-new-app.js';
import { expectGeneratedCodeToPassLint, expectGeneratedMethodsToAnswer, setUpCliE2e } from './support/cli-app.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const MINUTES = 60_000;
const e2e = setUpCliE2e(root, 'ESM template');

describe('from `nest new` to a tested JSON-RPC method in two commands (ESM template, Node 24, @nestjs/cli 12)', () => {
  it('nest new writes the ESM, vitest, Express template the schematics expect', async () => {
    await e2e.app.timed('nest new', () => run(e2e.app.toolchain.nest, ['new', 'app', '--package-manager', 'npm', '--skip-git'], { cwd: e2e.scratch, env: e2e.app.toolchain.env }));
    const pkg = JSON.parse(e2e.app.read('package.json'));
    expect(pkg.type).toBe('module');
    expect(pkg.scripts.test).toBe('vitest run');
    expect(Object.keys(pkg.dependencies)).toContain('@nestjs/platform-express');
    expect(e2e.app.read('src/main.ts')).toContain('const app = await NestFactory.create(AppModule);\n  await app.listen(process.env.PORT ?? 3000);');
    // Our packages come from the local registry; everything else from the public one.
    writeFileSync(join(e2e.app.dir, '.npmrc'), `@nest-jsonrpc:registry=${e2e.registry.url}\n`);
  }, 10 * MINUTES);

  it('nest add @nest-jsonrpc/server installs the package, sets the Express app up and installs the peers', async () => {
    const output = await e2e.app.timed('nest add @nest-jsonrpc/server', () => e2e.app.nest('add', '@nest-jsonrpc/server'));
    expect(output).toContain('@nest-jsonrpc/server is set up:\n');
    expect(output).not.toContain('FastifyAdapter');
    expect(output).toContain('  - src/app.module.ts: imports JsonRpcModule.forRoot()\n');
    expect(output).toMatch(/Packages installed successfully/);
    // Installed from the packed tarball (schematics included), with every peer.
    const installed = JSON.parse(e2e.app.read('node_modules/@nest-jsonrpc/server/package.json'));
    expect(installed.version).toBe(e2e.packages.find((p) => p.manifest.name === '@nest-jsonrpc/server')!.manifest.version);
    expect(existsSync(join(e2e.app.dir, 'node_modules/@nest-jsonrpc/server/dist/schematics/collection.json'))).toBe(true);
    for (const peer of ['@nestjs/platform-express', 'express', '@nestjs/throttler', 'class-validator', 'class-transformer']) {
      expect(existsSync(join(e2e.app.dir, 'node_modules', peer, 'package.json'))).toBe(true);
    }
    // Fastify is an optional peer: an Express app does not get it.
    expect(existsSync(join(e2e.app.dir, 'node_modules/fastify/package.json'))).toBe(false);
    expect(e2e.app.read('src/main.ts')).toBe(NEST_NEW_APP['src/main.ts']);
  }, 10 * MINUTES);

  it('nest g rpc hello -c @nest-jsonrpc/server writes the method, its DTOs and its spec', async () => {
    const output = await e2e.app.timed('nest g rpc hello -c @nest-jsonrpc/server', () => e2e.app.nest('g', 'rpc', 'hello', '-c', '@nest-jsonrpc/server'));
    expect(output).toContain('CREATE src/hello/hello.rpc.ts');
    expect(output).toContain('CREATE src/hello/hello.dto.ts');
    expect(output).toContain('CREATE src/hello/hello.rpc.spec.ts');
    expect(output).toContain('UPDATE src/app.module.ts');
    expect(e2e.app.read('src/app.module.ts')).toContain('providers: [AppService, HelloRpc],');
  }, 5 * MINUTES);

  it('through the collection nest add set in nest-cli.json: nest g rpc feed --type stream, and Nest’s own nest g service', async () => {
    const stream = await e2e.app.nest('g', 'rpc', 'feed', '--type', 'stream');
    expect(stream).toContain('CREATE src/feed/feed.rpc.ts');
    expect(e2e.app.read('src/app.module.ts')).toContain('imports: [JsonRpcModule.forRoot({ stream: { enabled: true } })],');
    const service = await e2e.app.nest('g', 'service', 'greeting');
    expect(service).toContain('CREATE src/greeting/greeting.service.ts');
  }, 5 * MINUTES);

  it('nest g rpc order --type zod (the Nest CLI refuses --schema): zod schemas in place of the DTOs, zod added and installed', async () => {
    const output = await e2e.app.timed('nest g rpc order --type zod', () => e2e.app.nest('g', 'rpc', 'order', '--type', 'zod'));
    expect(output).toContain('CREATE src/order/order.rpc.ts');
    expect(output).toContain('CREATE src/order/order.schema.ts');
    expect(output).toContain('CREATE src/order/order.rpc.spec.ts');
    expect(output).toContain('UPDATE package.json');
    expect(JSON.parse(e2e.app.read('package.json')).dependencies.zod).toBe('^4.2.0');
    expect(existsSync(join(e2e.app.dir, 'node_modules/zod/package.json'))).toBe(true);
    expect(e2e.app.read('src/order/order.rpc.ts')).toContain('    params: OrderParams,\n    result: OrderResult,\n');
  }, 5 * MINUTES);

  it('--dry-run writes nothing', async () => {
    const before = e2e.app.sourceSnapshot();
    const output = await e2e.app.nest('g', 'rpc', 'billing/charge', '--dry-run');
    expect(output).toContain('CREATE src/billing/charge/charge.rpc.ts');
    expect(output).toContain('Dry run enabled. No files written to disk.');
    expect(e2e.app.sourceSnapshot()).toEqual(before);
  }, 5 * MINUTES);

  it('nest add a second time changes nothing', async () => {
    const before = e2e.app.sourceSnapshot();
    const output = await e2e.app.nest('add', '@nest-jsonrpc/server', '--skip-install');
    expect(output).toContain('@nest-jsonrpc/server is set up already: nothing to change.');
    expect(e2e.app.sourceSnapshot()).toEqual(before);
  }, 5 * MINUTES);

  it('the app builds, and its own tests pass: the generated specs (through the testing helper), the template’s, and its e2e on Express', async () => {
    await e2e.app.timed('npm run build', () => e2e.app.run('npm', 'run', 'build'));
    expect(existsSync(join(e2e.app.dir, 'dist/main.js'))).toBe(true);
    const unit = await e2e.app.timed('npm test (vitest)', () => e2e.app.run('npm', 'test'));
    for (const spec of ['src/hello/hello.rpc.spec.ts', 'src/feed/feed.rpc.spec.ts', 'src/order/order.rpc.spec.ts', 'src/greeting/greeting.service.spec.ts', 'src/app.controller.spec.ts']) {
      expect(unit).toContain(`✓ ${spec}`);
    }
    expect(unit).toMatch(/Tests\s+8 passed \(8\)/);
    const endToEnd = await e2e.app.timed('npm run test:e2e', () => e2e.app.run('npm', 'run', 'test:e2e'));
    expect(endToEnd).toMatch(/Tests\s+1 passed \(1\)/);
  }, 10 * MINUTES);

  it('the generated code passes the app’s lint (oxlint, type-aware) and Prettier', async () => {
    await expectGeneratedCodeToPassLint(e2e.app);
    expect(await e2e.app.run(join(e2e.app.dir, 'node_modules/.bin/prettier'), '--check', 'src/order')).toContain('All matched files use Prettier code style!');
  }, 5 * MINUTES);

  it('the started app answers the generated methods over HTTP', async () => {
    const port = await e2e.app.start();
    await expectGeneratedMethodsToAnswer(port);
    const order = async (params: unknown) =>
      (await fetch(`http://127.0.0.1:${port}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', method: 'order', params, id: 1 }) })).json();
    // The zod schema's output reaches the handler: the name trimmed.
    expect(await order({ name: '  Ada ' })).toEqual({ jsonrpc: '2.0', result: { message: 'Hello, Ada!' }, id: 1 });
    expect(await order({ name: 'x'.repeat(101) })).toEqual({
      jsonrpc: '2.0',
      error: { code: -32602, message: 'Invalid params', data: [{ path: 'name', message: 'Too big: expected string to have <=100 characters', code: 'too_big' }] },
      id: 1,
    });
  }, 2 * MINUTES);
});
