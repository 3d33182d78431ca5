import * as ts from 'typescript';
import { ManualStepsRequired } from '../report/manual-steps-required';
import { ensureNamedImport, importSourceOf, removeImportDeclaration } from './imports';
import { applyEdits, findAll, lineOf, parseTypeScript, type TextEdit } from './source-text';

/**
 * Reads and switches the app's bootstrap file (`main.ts`): which module `NestFactory.create` boots,
 * on which platform (Express, Nest's default adapter, or `FastifyAdapter`: JsonRpcModule serves
 * both), and — with `nest add --platform fastify` — from Express to Fastify.
 *
 * The switch only rewrites what is adapter-specific in the create call and leaves every other line
 * alone. Code on the app object that only works on Express (middleware through `app.use`, Express
 * settings, views, static assets, the raw Express instance) has no mechanical Fastify translation,
 * so it stops the schematic with the lines to port by hand rather than producing an app that fails
 * at startup or, worse, silently drops a middleware.
 */

/** Methods of INestApplication / INestApplicationContext that behave the same on both adapters. */
const ADAPTER_NEUTRAL_APP_MEMBERS = new Set([
  'close', 'connectMicroservice', 'enableCors', 'enableCsrfProtection', 'enableShutdownHooks', 'enableVersioning',
  'flushLogs', 'get', 'getHttpServer', 'getMicroservices', 'getUrl', 'init', 'listen', 'registerRequestByContextId',
  'resolve', 'select', 'setGlobalPrefix', 'startAllMicroservices', 'useGlobalFilters', 'useGlobalGuards',
  'useGlobalInterceptors', 'useGlobalPipes', 'useLogger', 'useSecurityHeaders', 'useWebSocketAdapter',
]);

const PORTING_GUIDE = 'https://docs.nestjs.com/techniques/performance';

export interface RootModuleReference {
  /** The class passed to NestFactory.create, as exported by its file. */
  readonly className: string;
  /** The import specifier it comes from (`./app.module.js`); undefined when declared in the bootstrap file. */
  readonly from: string | undefined;
}

/** The HTTP platforms the module serves on. */
export type HttpPlatformName = 'fastify' | 'express';

export interface Bootstrap {
  readonly rootModule: RootModuleReference;
  /** `fastify` when the app is created with `new FastifyAdapter(...)`; else Express, Nest's default. */
  readonly platform: HttpPlatformName;
}

/** Which module main.ts boots, and on which platform. */
export function readBootstrap(path: string, text: string): Bootstrap {
  const sourceFile = parseTypeScript(path, text);
  const create = findCreateCall(path, sourceFile);
  return { rootModule: rootModuleOf(path, sourceFile, create), platform: isFastifyAdapter(create.arguments[1]) ? 'fastify' : 'express' };
}

function isFastifyAdapter(adapter: ts.Expression | undefined): boolean {
  return adapter !== undefined && ts.isNewExpression(adapter) && ts.isIdentifier(adapter.expression) && adapter.expression.text === 'FastifyAdapter';
}

export interface BootstrapSwitch {
  readonly rootModule: RootModuleReference;
  /** The new text, or the old one when the app is on Fastify already. */
  readonly text: string;
  readonly switched: boolean;
  /** Things the user should know that did not stop the switch. */
  readonly notes: readonly string[];
}

export function switchBootstrapToFastify(path: string, text: string): BootstrapSwitch {
  const sourceFile = parseTypeScript(path, text);
  const create = findCreateCall(path, sourceFile);
  const rootModule = rootModuleOf(path, sourceFile, create);
  const adapter = create.arguments[1];
  if (isFastifyAdapter(adapter)) return { rootModule, text, switched: false, notes: [] };

  const problems = expressOnlyCode(sourceFile, create);
  if (adapter && !ts.isObjectLiteralExpression(adapter)) {
    problems.unshift(`line ${lineOf(adapter)}: NestFactory.create is given \`${adapter.getText()}\`, which this schematic cannot tell apart from an Express adapter`);
  }
  if (problems.length > 0) {
    throw new ManualStepsRequired(
      `${path} uses Express-specific code that has no automatic Fastify equivalent:\n` + problems.map((p) => `    ${p}`).join('\n'),
      [
        `Port those lines to Fastify (Express middleware -> a Fastify plugin registered with app.register(), e.g. @fastify/helmet, @fastify/compress, @fastify/cookie; see ${PORTING_GUIDE}).`,
        `Create the app with \`NestFactory.create<NestFastifyApplication>(AppModule, new FastifyAdapter())\` (both from @nestjs/platform-fastify).`,
        'Run `nest add @nest-jsonrpc/server --platform fastify` again: it leaves a Fastify main.ts as it is and does the rest.',
        'Or keep the app on Express: `nest add @nest-jsonrpc/server` without --platform serves JSON-RPC on Express as it is.',
      ],
    );
  }

  const edits: TextEdit[] = [];
  const typeArgument = create.typeArguments?.[0];
  if (!typeArgument) {
    edits.push({ start: create.expression.getEnd(), end: create.expression.getEnd(), text: '<NestFastifyApplication>' });
  } else if (typeArgument.getText() === 'NestExpressApplication') {
    edits.push({ start: typeArgument.getStart(sourceFile), end: typeArgument.getEnd(), text: 'NestFastifyApplication' });
  }
  const moduleEnd = create.arguments[0].getEnd();
  edits.push({ start: moduleEnd, end: moduleEnd, text: ', new FastifyAdapter()' });
  let updated = applyEdits(text, edits);

  const expressImport = parseTypeScript(path, updated).statements.find(
    (s): s is ts.ImportDeclaration => ts.isImportDeclaration(s) && ts.isStringLiteral(s.moduleSpecifier) && s.moduleSpecifier.text === '@nestjs/platform-express',
  );
  if (expressImport) updated = removeImportDeclaration(updated, expressImport);
  updated = ensureNamedImport(path, updated, { name: 'FastifyAdapter', from: '@nestjs/platform-fastify' });
  updated = ensureNamedImport(path, updated, { name: 'NestFastifyApplication', from: '@nestjs/platform-fastify', typeOnly: true });

  return { rootModule, text: updated, switched: true, notes: bootstrapNotes(sourceFile, create) };
}

function findCreateCall(path: string, sourceFile: ts.SourceFile): ts.CallExpression {
  const factory = localNameOf(sourceFile, 'NestFactory', '@nestjs/core');
  const byHand = [
    'Import JsonRpcModule.forRoot() into the module your bootstrap file starts (README: "Use it in your own Nest app"); ' +
      'the app may run on Express or on Fastify.',
  ];
  if (!factory) throw new ManualStepsRequired(`${path} does not import NestFactory from @nestjs/core, so this schematic cannot find the app it starts.`, byHand);
  const calls = findAll(sourceFile, (node): node is ts.CallExpression =>
    ts.isCallExpression(node) &&
    ts.isPropertyAccessExpression(node.expression) &&
    ts.isIdentifier(node.expression.expression) &&
    node.expression.expression.text === factory,
  );
  const creates = calls.filter((c) => (c.expression as ts.PropertyAccessExpression).name.text === 'create');
  if (creates.length === 1 && creates[0].arguments.length > 0) return creates[0];
  if (creates.length > 1) {
    throw new ManualStepsRequired(`${path} calls NestFactory.create ${creates.length} times (lines ${creates.map(lineOf).join(', ')}); this schematic edits a single app only.`, byHand);
  }
  const others = calls.map((c) => `NestFactory.${(c.expression as ts.PropertyAccessExpression).name.text}`);
  throw new ManualStepsRequired(
    others.length > 0
      ? `${path} starts no HTTP app (it calls ${[...new Set(others)].join(', ')}, not NestFactory.create(Module)); JSON-RPC is served over HTTP.`
      : `${path} never calls NestFactory.create(Module).`,
    byHand,
  );
}

function rootModuleOf(path: string, sourceFile: ts.SourceFile, create: ts.CallExpression): RootModuleReference {
  let moduleArgument: ts.Expression = create.arguments[0];
  // `AppModule.forRoot(...)`: a dynamic root module; the class is what the call is made on.
  if (ts.isCallExpression(moduleArgument) && ts.isPropertyAccessExpression(moduleArgument.expression)) moduleArgument = moduleArgument.expression.expression;
  if (!ts.isIdentifier(moduleArgument)) {
    throw new ManualStepsRequired(`${path}: NestFactory.create is given \`${create.arguments[0].getText()}\` on line ${lineOf(create)}, not a module class this schematic can follow.`, [
      'Add JsonRpcModule.forRoot() to the imports of your root module by hand.',
    ]);
  }
  const imported = importSourceOf(sourceFile, moduleArgument.text);
  if (!imported) return { className: moduleArgument.text, from: undefined };
  return { className: imported.importedName === 'default' ? moduleArgument.text : imported.importedName, from: imported.from };
}

function localNameOf(sourceFile: ts.SourceFile, exportedName: string, from: string): string | undefined {
  for (const declaration of sourceFile.statements.filter(ts.isImportDeclaration)) {
    const bindings = declaration.importClause?.namedBindings;
    if (!ts.isStringLiteral(declaration.moduleSpecifier) || declaration.moduleSpecifier.text !== from) continue;
    if (!bindings || !ts.isNamedImports(bindings)) continue;
    const element = bindings.elements.find((e) => (e.propertyName ?? e.name).text === exportedName);
    if (element) return element.name.text;
  }
  return undefined;
}

/** The variable the created app is stored in (`const app = await NestFactory.create(...)`). */
function appVariableOf(create: ts.CallExpression): string | undefined {
  let node: ts.Node = create.parent;
  while (ts.isAwaitExpression(node) || ts.isParenthesizedExpression(node) || ts.isAsExpression(node)) node = node.parent;
  if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name)) return node.name.text;
  if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.EqualsToken && ts.isIdentifier(node.left)) return node.left.text;
  return undefined;
}

function expressOnlyCode(sourceFile: ts.SourceFile, create: ts.CallExpression): string[] {
  const problems: string[] = [];
  for (const declaration of sourceFile.statements.filter(ts.isImportDeclaration)) {
    const from = ts.isStringLiteral(declaration.moduleSpecifier) ? declaration.moduleSpecifier.text : '';
    if (from === 'express') problems.push(`line ${lineOf(declaration)}: imports express`);
    if (from !== '@nestjs/platform-express') continue;
    const bindings = declaration.importClause?.namedBindings;
    const names = bindings && ts.isNamedImports(bindings) ? bindings.elements.map((e) => e.name.text) : ['*'];
    const others = names.filter((n) => n !== 'NestExpressApplication');
    if (others.length > 0 || declaration.importClause?.name) problems.push(`line ${lineOf(declaration)}: imports ${others.join(', ') || 'a default'} from @nestjs/platform-express`);
  }
  const typeArgument = create.typeArguments?.[0];
  for (const reference of findAll(sourceFile, ts.isTypeReferenceNode)) {
    if (reference.typeName.getText() === 'NestExpressApplication' && reference !== typeArgument) {
      problems.push(`line ${lineOf(reference)}: uses the NestExpressApplication type`);
    }
  }
  const app = appVariableOf(create);
  if (app) {
    for (const access of findAll(sourceFile, ts.isPropertyAccessExpression)) {
      if (!ts.isIdentifier(access.expression) || access.expression.text !== app) continue;
      const member = access.name.text;
      if (ADAPTER_NEUTRAL_APP_MEMBERS.has(member)) continue;
      problems.push(`line ${lineOf(access)}: ${app}.${member}(...) ${member === 'use' ? 'registers Express middleware' : 'is Express-specific (or unknown to this check)'}`);
    }
  }
  return problems;
}

function bootstrapNotes(sourceFile: ts.SourceFile, create: ts.CallExpression): string[] {
  const notes: string[] = [];
  const app = appVariableOf(create);
  if (!app) return notes;
  for (const call of findAll(sourceFile, ts.isCallExpression)) {
    const callee = call.expression;
    if (ts.isPropertyAccessExpression(callee) && ts.isIdentifier(callee.expression) && callee.expression.text === app && callee.name.text === 'listen') {
      if (call.arguments.length === 1) {
        notes.push(
          `Fastify listens on localhost only unless given a host (Express listened on every interface): ` +
            `to accept outside connections (e.g. in a container) use ${app}.listen(${call.arguments[0].getText()}, '0.0.0.0') (line ${lineOf(call)}).`,
        );
      }
    } else if (call.arguments.some((a) => ts.isIdentifier(a) && a.text === app)) {
      notes.push(`line ${lineOf(call)} passes the app to \`${callee.getText()}\`: check that it supports Fastify.`);
    }
  }
  return notes;
}
