/**
 * A new user's first steps on `nest new`'s other template, CommonJS + jest (and what an app
 * upgraded from Nest 11 looks like): the template made by the schematic `nest new` runs, then
 * `nest add @nest-jsonrpc/server --platform fastify` (the packed tarballs from a local registry for
 * our scope; the switch from Express to Fastify — the ESM run keeps Express) and
 * `nest g rpc ...`; then the app's own build, jest tests (on Node 24: jest loads ES modules into
 * CommonJS tests from Node 24.9 on), e2e tests and lint; then the started app answers.
 *
 * `nest new` asks for the template interactively and has no flag for it, so the app is generated
 * the way the CLI generates it: the CLI's own devkit `schematics` binary running
 * `@nestjs/schematics:application` with `--type=cjs`, then `npm install` (see docs/cli.md).
 */
import { existsSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from '../support/processes.js';
import { CJS_MAIN_ON_FASTIFY, NEST_NEW_CJS_APP } from './fixtures/nest-new-cjs-app.js';
import { expectGeneratedCodeToPassLint, expectGeneratedMethodsToAnswer, setUpCliE2e } from './support/cli-app.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const MINUTES = 60_000;
const e2e = setUpCliE2e(root, 'CommonJS template');

describe('the CommonJS + jest template: nest add and nest g rpc give an app that builds, passes its jest tests and answers (Node 24, @nestjs/cli 12)', () => {
  it('the CLI’s application schematic with --type=cjs writes the CJS template (as nest new does when CJS is chosen)', async () => {
    await e2e.app.timed('application schematic --type=cjs + npm install', async () => {
      await run(e2e.app.toolchain.schematics, ['@nestjs/schematics:application', '--name=app', '--type=cjs', '--package-manager=npm', '--language=ts', '--no-interactive'], {
        cwd: e2e.scratch,
        env: e2e.app.toolchain.env,
      });
      await e2e.app.run('npm', 'install');
    });
    // The template the schematics are tested against (test/schematics/fixtures), file for file.
    for (const [path, text] of Object.entries(NEST_NEW_CJS_APP)) expect([path, e2e.app.read(path)]).toEqual([path, text]);
    const pkg = JSON.parse(e2e.app.read('package.json'));
    expect(pkg.type).toBeUndefined();
    expect(pkg.scripts.test).toBe('node --experimental-vm-modules ./node_modules/jest/bin/jest.js');
    writeFileSync(join(e2e.app.dir, '.npmrc'), `@nest-jsonrpc:registry=${e2e.registry.url}\n`);
  }, 10 * MINUTES);

  it('nest add @nest-jsonrpc/server --platform fastify sets the CommonJS app up on Fastify, without asking it to become ESM', async () => {
    const output = await e2e.app.timed('nest add @nest-jsonrpc/server --platform fastify', () => e2e.app.nest('add', '@nest-jsonrpc/server', '--platform', 'fastify'));
    expect(output).toContain('@nest-jsonrpc/server is set up:\n');
    expect(output).toContain('  - src/app.module.ts: imports JsonRpcModule.forRoot()\n');
    expect(output).toContain('  - test/app.e2e-spec.ts: createNestApplication() now gets a FastifyAdapter');
    expect(output).toMatch(/Packages installed successfully/);
    expect(output).not.toMatch(/ESM-only|"type": "module"|jest loads ES modules/);
    expect(output).toContain('Note: package.json keeps @nestjs/platform-express and @types/express:');
    expect(e2e.app.read('src/main.ts')).toBe(CJS_MAIN_ON_FASTIFY);
    expect(JSON.parse(e2e.app.read('package.json')).type).toBeUndefined();
  }, 10 * MINUTES);

  it('nest g rpc hello, nest g rpc feed --type stream and nest g service greeting write CommonJS code and jest specs', async () => {
    const hello = await e2e.app.timed('nest g rpc hello', () => e2e.app.nest('g', 'rpc', 'hello'));
    expect(hello).toContain('CREATE src/hello/hello.rpc.spec.ts');
    expect(e2e.app.read('src/app.module.ts')).toContain("import { HelloRpc } from './hello/hello.rpc';");
    expect(e2e.app.read('src/hello/hello.rpc.spec.ts')).toContain("} from '@nest-jsonrpc/server/testing';\nimport { HelloRpc } from './hello.rpc';\n");
    expect(await e2e.app.nest('g', 'rpc', 'feed', '--type', 'stream')).toContain('CREATE src/feed/feed.rpc.ts');
    expect(e2e.app.read('src/app.module.ts')).toContain('imports: [JsonRpcModule.forRoot({ stream: { enabled: true } })],');
    expect(await e2e.app.nest('g', 'service', 'greeting')).toContain('CREATE src/greeting/greeting.service.ts');
  }, 5 * MINUTES);

  it('the app builds to CommonJS, and its own jest tests pass: the generated specs (through the testing helper), the template’s, and its e2e on Fastify', async () => {
    await e2e.app.timed('npm run build', () => e2e.app.run('npm', 'run', 'build'));
    expect(e2e.app.read('dist/app.module.js')).toContain('require("@nest-jsonrpc/server")');
    const unit = await e2e.app.timed('npm test (jest)', () => e2e.app.run('npm', 'test'));
    for (const spec of ['src/hello/hello.rpc.spec.ts', 'src/feed/feed.rpc.spec.ts', 'src/greeting/greeting.service.spec.ts', 'src/app.controller.spec.ts']) {
      expect(unit).toContain(`PASS ${spec}`);
    }
    expect(unit).toMatch(/Tests:\s+6 passed, 6 total/);
    const endToEnd = await e2e.app.timed('npm run test:e2e (jest)', () => e2e.app.run('npm', 'run', 'test:e2e'));
    expect(endToEnd).toMatch(/Tests:\s+1 passed, 1 total/);
  }, 10 * MINUTES);

  it('the generated code passes the app’s lint (oxlint, type-aware) and Prettier', async () => {
    await expectGeneratedCodeToPassLint(e2e.app);
  }, 5 * MINUTES);

  it('the started app (node dist/main.js, CommonJS) answers the generated methods over HTTP', async () => {
    expect(existsSync(join(e2e.app.dir, 'dist/main.js'))).toBe(true);
    await expectGeneratedMethodsToAnswer(await e2e.app.start());
  }, 2 * MINUTES);
});
