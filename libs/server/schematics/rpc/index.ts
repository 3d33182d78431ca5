import {
  apply,
  applyTemplates,
  chain,
  filter,
  mergeWith,
  move,
  noop,
  type Rule,
  SchematicsException,
  strings,
  type Tree,
  url,
} from '@angular-devkit/schematics';
import { NodePackageInstallTask } from '@angular-devkit/schematics/tasks';
import { posix } from 'node:path';
import { appPlatform } from '../project/app-platform';
import { addDependencies, OWN_PACKAGE } from '../project/dependencies';
import { findJsonRpcModuleSetup } from '../project/json-rpc-module-setup';
import { type NestProject, readNestProject } from '../project/nest-project';
import { PendingWrites } from '../project/pending-writes';
import { relativeImportPath } from '../project/source-files';
import { detectTestRunner, type TestRunner } from '../project/test-runner';
import { ChangeReport } from '../report/change-report';
import { ManualStepsRequired } from '../report/manual-steps-required';
import { enabledOption, ensureModuleOptions } from '../typescript/json-rpc-module-options';
import { addToModule, refersTo } from '../typescript/nest-module';
import type { RpcOptions } from './schema';

const METHOD_NAME = /^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*$/;

/** The zod an app gets for `--schema zod`: Standard JSON Schema (which describes the method) came in 4.2. */
export const ZOD_RANGE = '^4.2.0';

/** Where the files go and what everything is called, from `nest g rpc billing/charge`. */
interface RpcTarget {
  /** `charge`: the file stem (kebab case, like every Nest schematic). */
  readonly fileName: string;
  /** `Charge`: prefix of ChargeRpc, ChargeParams, ChargeResult, ChargeRow. */
  readonly className: string;
  /** `charge`: the handler method. */
  readonly handler: string;
  /** `billing.charge`: the JSON-RPC method name. */
  readonly method: string;
  /** `src/billing/charge` (or `src/billing` with --flat). */
  readonly directory: string;
}

/**
 * `nest g rpc <name>`: a provider with one @RpcMethod (or, with --type stream, an @RpcStream async
 * generator), its params DTO and result (or row) class — or, with --schema zod (--type zod through
 * the Nest CLI), zod schemas in their place — registration in the nearest module, and a spec for
 * the app's own test runner that boots the provider behind JsonRpcModule on a real port and calls
 * it over HTTP.
 */
export function rpc(options: RpcOptions): Rule {
  return (tree, context) => {
    if (options.language !== undefined && options.language !== 'ts') {
      throw new SchematicsException(`${OWN_PACKAGE} generates TypeScript only (nest-cli.json says language "${options.language}").`);
    }
    const project = readNestProject(tree, options.sourceRoot);
    const stream = options.stream || options.type === 'stream' || options.type === 'zod-stream';
    const zod = options.schema === 'zod' || options.type === 'zod' || options.type === 'zod-stream';
    /** The file of the params and result (or row): DTO classes, or zod schemas. */
    const models = zod ? 'schema' : 'dto';
    const target = targetOf(options, project);
    const writes = new PendingWrites(tree);
    const report = new ChangeReport();
    const providerFile = posix.join(target.directory, `${target.fileName}.rpc.ts`);
    const existing = ['rpc', models].map((kind) => posix.join(target.directory, `${target.fileName}.${kind}.ts`)).filter((file) => tree.exists(file));
    if (existing.length > 0) {
      throw new ManualStepsRequired(`${existing.join(' and ')} exist already.`, [`Pick another name, or delete ${existing.length > 1 ? 'them' : 'it'} and run the command again.`]);
    }

    if (!options.skipImport) registerProvider(tree, project, target, providerFile, writes, report);
    checkModuleSetup(tree, project, stream, writes, report);
    if (zod) addZod(project, writes, report);
    const testRunner = options.spec ? specRunner(project, report) : undefined;
    const specFileSuffix = strings.dasherize(options.specFileSuffix);
    const created = ['rpc', models, ...(testRunner ? [`rpc.${specFileSuffix}`] : [])].map((kind) => `${target.fileName}.${kind}.ts`);
    report.changed(target.directory, `created ${created.join(', ')}${testRunner ? ` (spec for ${testRunner})` : ''}`);

    const files = apply(url(stream ? './files/stream' : './files/method'), [
      testRunner ? noop() : filter((path) => !path.includes('__specFileSuffix__')),
      filter((path) => !path.endsWith(zod ? '.dto.ts.template' : '.schema.ts.template')),
      applyTemplates({
        ...target,
        ext: project.isEsm ? '.js' : '',
        specFileSuffix,
        testRunner,
        zod,
        models,
        // The spec boots its testing app on the platform main.ts runs the app on.
        fastify: appPlatform(tree, project) === 'fastify',
        // Prettier's 80 columns, which `nest new` apps format with: one line when it fits.
        streamSignatureFits: `  async *${target.handler}(params: ${target.className}Params, ctx: RpcContext): AsyncGenerator<${target.className}Row> {`.length <= 80,
      }),
      move(target.directory),
    ]);
    if (writes.has('package.json')) context.addTask(new NodePackageInstallTask());
    return chain([
      mergeWith(files),
      () => writes.commit(),
      () =>
        report.print(context.logger, `JSON-RPC method ${target.method} (${target.className}Rpc):`, '', [
          `POST ${stream ? 'the stream route (/rpc/stream by default)' : '/rpc'} {"jsonrpc":"2.0","method":"${target.method}","params":${stream ? '{"count":3}' : '{"name":"Ada"}'},"id":1}`,
        ]),
    ]);
  };
}

function targetOf(options: RpcOptions, project: NestProject): RpcTarget {
  const segments = (path: string | undefined) => (path ?? '').split('/').filter((s) => s !== '' && s !== '.').map((s) => strings.dasherize(s));
  const nameSegments = segments(options.name);
  const fileName = nameSegments.pop();
  const folders = [...segments(options.path), ...nameSegments];
  if (!fileName || !/^[a-z_$]/i.test(strings.camelize(fileName)) || folders.some((f) => f === '..')) {
    throw new SchematicsException(`"${options.name}" is not a usable name: use letters, digits and dashes, optionally under a path (billing/charge).`);
  }
  const method = [...folders, fileName].map((s) => strings.camelize(s)).join('.');
  if (!METHOD_NAME.test(method) || method.startsWith('rpc.')) {
    throw new SchematicsException(`"${method}" (from "${options.name}") is not a usable JSON-RPC method name: dot-separated identifiers (billing.charge), not starting with the reserved "rpc.".`);
  }
  return {
    fileName,
    className: strings.classify(fileName),
    handler: strings.camelize(fileName),
    method,
    directory: posix.join(project.sourceRoot, ...folders, options.flat ? '' : fileName),
  };
}

/** Adds the provider to the nearest module, walking up from the new files' folder as Nest's schematics do. */
function registerProvider(tree: Tree, project: NestProject, target: RpcTarget, providerFile: string, writes: PendingWrites, report: ChangeReport): void {
  const provider = `${target.className}Rpc`;
  const modulePath = nearestModule(tree, target.directory);
  if (!modulePath) {
    throw new ManualStepsRequired(`No *.module.ts in ${target.directory} or any folder above it, so ${provider} has no module to join.`, [
      `Create one (nest g module ${target.directory.slice(project.sourceRoot.length + 1) || target.fileName}) and run the command again,`,
      `or pass --skip-import and add ${provider} to a module's providers yourself.`,
    ]);
  }
  const text = addToModule(
    modulePath,
    writes.read(modulePath)!,
    undefined,
    { property: 'providers', element: provider, isPresent: refersTo(provider), importName: provider, importFrom: relativeImportPath(modulePath, providerFile, project.isEsm) },
    `Add ${provider} to the providers of a module, or pass --skip-import.`,
  );
  writes.write(modulePath, text);
  if (writes.has(modulePath)) report.changed(modulePath, `provides ${provider}`);
}

function nearestModule(tree: Tree, directory: string): string | undefined {
  for (let entry = tree.getDir(directory); ; entry = entry.parent!) {
    const moduleFile = entry.subfiles.filter((f) => f.endsWith('.module.ts')).sort()[0];
    if (moduleFile) return posix.join(entry.path, moduleFile).replace(/^\//, '');
    if (!entry.parent) return undefined;
  }
}

/** A method is only served when JsonRpcModule is imported; a stream method also needs the stream route on. */
function checkModuleSetup(tree: Tree, project: NestProject, stream: boolean, writes: PendingWrites, report: ChangeReport): void {
  const setup = findJsonRpcModuleSetup(tree, writes, project.sourceRoot);
  if (!setup) {
    report.note(`JsonRpcModule is not imported anywhere in ${project.sourceRoot}: run \`nest add ${OWN_PACKAGE}\` so the method is served.`);
    return;
  }
  if (!stream) return;
  const edit = ensureModuleOptions(setup.path, setup.text, [enabledOption('stream')]);
  if ('blockedAt' in edit) {
    report.note(`JsonRpcModule is configured at ${edit.blockedAt}: make sure its options include stream: { enabled: true }, or startup fails.`);
    return;
  }
  if (edit.text === setup.text) return;
  writes.write(setup.path, edit.text);
  report.changed(setup.path, 'JsonRpcModule options now include stream: { enabled: true }');
}

/** A zod-validated method needs zod itself: declared unless the app has it already (at any range). */
function addZod(project: NestProject, writes: PendingWrites, report: ChangeReport): void {
  const declared = { ...project.packageJson.devDependencies, ...project.packageJson.dependencies };
  if (declared.zod !== undefined) return;
  const text = writes.read('package.json');
  if (text === undefined) {
    report.note(`No package.json: install zod (npm install zod@${ZOD_RANGE}) for the generated schemas.`);
    return;
  }
  writes.write('package.json', addDependencies(text, { zod: ZOD_RANGE }));
  report.changed('package.json', `dependencies: zod ${ZOD_RANGE} (installed next)`);
}

function specRunner(project: NestProject, report: ChangeReport): TestRunner | undefined {
  const choice = detectTestRunner(project.packageJson);
  if (!choice.runner) report.note(`No spec written: ${choice.because}. Add one of them (vitest, as \`nest new\` does) and generate again, or pass --no-spec.`);
  return choice.runner;
}
