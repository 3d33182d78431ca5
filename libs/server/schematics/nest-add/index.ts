import { type Rule, SchematicsException, type Tree } from '@angular-devkit/schematics';
import { NodePackageInstallTask } from '@angular-devkit/schematics/tasks';
import { applyEdits, modify } from 'jsonc-parser';
import { checkCompilerSettings, TSCONFIG } from '../project/compiler-settings';
import { addDependencies, OWN_PACKAGE, ownPackageJson, planDependencies } from '../project/dependencies';
import { findJsonRpcModuleSetup } from '../project/json-rpc-module-setup';
import { jsonFormattingOf, type NestProject, type PackageJson, readJsonFile, readNestProject } from '../project/nest-project';
import { PendingWrites } from '../project/pending-writes';
import { jestRequireEsmNote } from '../project/test-runner';
import { resolveRelativeImport, typeScriptFilesUnder } from '../project/source-files';
import { ChangeReport } from '../report/change-report';
import { ManualStepsRequired } from '../report/manual-steps-required';
import { readBootstrap, switchBootstrapToFastify, type HttpPlatformName } from '../typescript/bootstrap-file';
import { enabledOption, ensureModuleOptions, type ModuleOption, pathOption } from '../typescript/json-rpc-module-options';
import { addToModule, refersTo } from '../typescript/nest-module';
import { switchTestingAppsToFastify } from '../typescript/testing-app-adapter';
import type { NestAddOptions } from './schema';

/** Nest's default collection: an app still on it gets this package's collection, which extends it. */
const NEST_COLLECTION = '@nestjs/schematics';

/**
 * `nest add @nest-jsonrpc/server`: after the Nest CLI installed the package, make the app serve
 * JSON-RPC. Every change is planned first and written only when all of them could be planned; a run
 * on an app that is set up already changes nothing.
 */
export function nestAdd(options: NestAddOptions): Rule {
  return (tree, context) => {
    if (options.path !== undefined && !options.path.startsWith('/')) {
      throw new SchematicsException(`--path must be an absolute route such as /rpc (got "${options.path}").`);
    }
    const project = readNestProject(tree, options.sourceRoot);
    const writes = new PendingWrites(tree);
    const report = new ChangeReport();

    const { rootModule, platform } = choosePlatform(tree, project, options, writes, report);
    addPeerDependencies(project, options, platform, writes, report);
    configureJsonRpcModule(tree, project, rootModule, moduleOptionsOf(options), writes, report);
    enableDecorators(tree, project, writes, report);
    checkTestRunner(tree, project, report);
    useThisCollection(project, writes, report);

    writes.commit();
    if (writes.has('package.json')) context.addTask(new NodePackageInstallTask());
    report.print(
      context.logger,
      `${OWN_PACKAGE} is set up:`,
      `${OWN_PACKAGE} is set up already: nothing to change.`,
      ['nest g rpc hello              # a method, its DTOs and a spec that calls it over HTTP', 'nest g rpc feed --type stream # a streaming method'],
    );
  };
}

function moduleOptionsOf(options: NestAddOptions): ModuleOption[] {
  return [
    ...(options.path ? [pathOption(options.path)] : []),
    ...(options.stream ? [enabledOption('stream')] : []),
    ...(options.durable ? [enabledOption('durable')] : []),
  ];
}

function addPeerDependencies(project: NestProject, options: NestAddOptions, platform: HttpPlatformName, writes: PendingWrites, report: ChangeReport): void {
  const plan = planDependencies(project.packageJson, ownPackageJson(), { durable: options.durable, platform });
  const added = Object.entries(plan.add).sort(([a], [b]) => a.localeCompare(b));
  if (added.length > 0) {
    writes.write('package.json', addDependencies(writes.read('package.json')!, plan.add));
    report.changed('package.json', `added ${added.map(([name, range]) => `${name}@${range}`).join(', ')}`);
  }
  for (const dependency of plan.differing) report.note(`package.json has ${dependency}; align it if installing complains.`);
}

/**
 * The one place that decides the app's HTTP platform: the one main.ts creates the app on (Express,
 * Nest's default, stays Express: the module serves it as it is), or Fastify with `--platform
 * fastify` — then main.ts and the testing apps of its specs move to Fastify, when nothing in
 * main.ts is Express-only. Returns the platform and the root module main.ts creates the app with.
 */
function choosePlatform(
  tree: Tree,
  project: NestProject,
  options: NestAddOptions,
  writes: PendingWrites,
  report: ChangeReport,
): { rootModule: { path: string; className: string }; platform: HttpPlatformName } {
  const entry = project.entryFile;
  const text = writes.read(entry);
  if (text === undefined) {
    throw new ManualStepsRequired(`There is no ${entry} (the bootstrap file nest-cli.json's sourceRoot and entryFile point at).`, [
      'Pass --source-root, or set sourceRoot / entryFile in nest-cli.json, and run the command again.',
    ]);
  }
  const bootstrap = readBootstrap(entry, text);
  const platform = options.platform ?? bootstrap.platform;
  if (platform === 'express' && bootstrap.platform === 'fastify') {
    throw new ManualStepsRequired(`${entry} creates the app on FastifyAdapter; this schematic does not move an app from Fastify to Express.`, [
      'Run `nest add @nest-jsonrpc/server` without --platform: JsonRpcModule serves the app on Fastify as it is.',
      'Or create the app without FastifyAdapter in main.ts (Express, Nest’s default) and run the command again.',
    ]);
  }
  if (platform === 'express') return { rootModule: rootModuleFile(tree, entry, bootstrap.rootModule), platform };
  const switched = switchBootstrapToFastify(entry, text);
  if (switched.switched) {
    writes.write(entry, switched.text);
    report.changed(entry, 'creates the app on FastifyAdapter (NestFastifyApplication) instead of Express');
    switchTestingApps(tree, project, writes, report);
  }
  for (const note of switched.notes) report.note(`${entry}: ${note}`);
  if (switched.switched) noteExpressKept(project, report);
  return { rootModule: rootModuleFile(tree, entry, switched.rootModule), platform };
}

/** Express's packages stay after the switch (docs/cli.md, "What it only tells you"): said, not removed. */
function noteExpressKept(project: NestProject, report: ChangeReport): void {
  const declared = (name: string) => project.packageJson.dependencies?.[name] !== undefined || project.packageJson.devDependencies?.[name] !== undefined;
  const kept = ['@nestjs/platform-express', '@types/express'].filter(declared);
  if (kept.length === 0) return;
  report.note(
    `package.json keeps ${kept.join(' and ')}: other files may still use Express (FileInterceptor, Express.Multer.File), and removing a dependency is yours to decide; remove ${kept.length > 1 ? 'them' : 'it'} once nothing imports ${kept.length > 1 ? 'them' : 'it'}.`,
  );
}

/** The file and class of the root module main.ts boots. */
function rootModuleFile(tree: Tree, entry: string, { className, from }: { className: string; from: string | undefined }): { path: string; className: string } {
  if (from === undefined) return { path: entry, className };
  const path = resolveRelativeImport(tree, entry, from);
  if (!path) {
    throw new ManualStepsRequired(`${entry} imports its root module ${className} from '${from}', which this schematic cannot map to a file.`, [
      `Add JsonRpcModule.forRoot() (from ${OWN_PACKAGE}) to the imports of ${className}.`,
    ]);
  }
  return { path, className };
}

function configureJsonRpcModule(
  tree: Tree,
  project: NestProject,
  rootModule: { path: string; className: string },
  options: readonly ModuleOption[],
  writes: PendingWrites,
  report: ChangeReport,
): void {
  const existing = findJsonRpcModuleSetup(tree, writes, project.sourceRoot);
  const path = existing?.path ?? rootModule.path;
  const original = writes.read(path)!;
  const withModule = existing
    ? original
    : addToModule(
        path,
        original,
        rootModule.className,
        { property: 'imports', element: 'JsonRpcModule.forRoot()', isPresent: refersTo('JsonRpcModule'), importName: 'JsonRpcModule', importFrom: OWN_PACKAGE },
        `Add JsonRpcModule.forRoot() (from ${OWN_PACKAGE}) to the imports of ${rootModule.className}.`,
      );
  const edit = ensureModuleOptions(path, withModule, options);
  if ('blockedAt' in edit) {
    throw new ManualStepsRequired(`JsonRpcModule is configured at ${edit.blockedAt}, which this schematic cannot edit.`, [
      `Give JsonRpcModule these options: ${options.map((o) => o.display).join(', ')}.`,
    ]);
  }
  if (edit.text === original) return;
  writes.write(path, edit.text);
  const call = /JsonRpcModule\.forRoot\(/.exec(edit.text)!;
  report.changed(path, existing ? `JsonRpcModule options now include ${options.map((o) => o.display).join(', ')}` : `imports ${callText(edit.text, call.index)}`);
}

/** The source text of the call starting at `start` (up to its balanced closing parenthesis). */
function callText(text: string, start: number): string {
  let depth = 0;
  for (let i = text.indexOf('(', start); i < text.length; i++) {
    if (text[i] === '(') depth++;
    else if (text[i] === ')' && --depth === 0) return text.slice(start, i + 1).replace(/\s+/g, ' ');
  }
  return text.slice(start);
}

function enableDecorators(tree: Tree, project: NestProject, writes: PendingWrites, report: ChangeReport): void {
  const check = checkCompilerSettings(tree, project);
  if (check.tsconfig !== undefined) {
    writes.write(TSCONFIG, check.tsconfig);
    report.changed(TSCONFIG, `turned on ${check.enabled.join(' and ')} (DTO validation reads the decorator metadata)`);
  }
  for (const warning of check.warnings) report.note(warning);
}

/** A CommonJS app tested with jest: what jest needs to load ES modules, when something is missing. */
function checkTestRunner(tree: Tree, project: NestProject, report: ChangeReport): void {
  const installedJest = readJsonFile<PackageJson>(tree, 'node_modules/jest/package.json')?.version;
  const note = jestRequireEsmNote(project.packageJson, project.isEsm, { installedJest, nodeVersion: process.versions.node }, OWN_PACKAGE);
  if (note !== undefined) report.note(note);
}

function useThisCollection(project: NestProject, writes: PendingWrites, report: ChangeReport): void {
  const nestCli = project.nestCli;
  if (!nestCli) {
    report.note(`There is no nest-cli.json: generate methods with \`nest g rpc <name> -c ${OWN_PACKAGE}\`.`);
    return;
  }
  if (nestCli.collection === OWN_PACKAGE) return;
  if (nestCli.collection !== undefined && nestCli.collection !== NEST_COLLECTION) {
    report.note(`nest-cli.json uses the collection ${nestCli.collection}: generate methods with \`nest g rpc <name> -c ${OWN_PACKAGE}\`.`);
    return;
  }
  const text = writes.read(nestCli.path)!;
  writes.write(nestCli.path, applyEdits(text, modify(text, ['collection'], OWN_PACKAGE, { formattingOptions: jsonFormattingOf(text) })));
  report.changed(nestCli.path, `collection is ${OWN_PACKAGE} (it extends ${NEST_COLLECTION}, so every \`nest g\` schematic still works, and \`nest g rpc\` needs no -c)`);
}

function switchTestingApps(tree: Tree, project: NestProject, writes: PendingWrites, report: ChangeReport): void {
  const specs = [...new Set([...typeScriptFilesUnder(tree, project.sourceRoot), ...typeScriptFilesUnder(tree, 'test')])].filter((p) => /spec\.ts$/.test(p));
  for (const path of specs) {
    const text = writes.read(path)!;
    if (!text.includes('createNestApplication')) continue;
    const result = switchTestingAppsToFastify(path, text);
    for (const line of result.leftAlone) {
      report.note(`${path} line ${line}: createNestApplication() is given an adapter this schematic cannot tell apart from Express's: give it \`new FastifyAdapter()\` by hand.`);
    }
    if (result.switched === 0) continue;
    writes.write(path, result.text);
    report.changed(path, `createNestApplication() now gets a FastifyAdapter${result.readied ? ', and the test waits for Fastify to be ready after init()' : ''}`);
    for (const line of result.withoutReady) {
      report.note(`${path} line ${line}: after \`await app.init()\` add \`await app.getHttpAdapter().getInstance().ready()\` (supertest needs Fastify ready).`);
    }
  }
}
