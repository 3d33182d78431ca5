import * as ts from 'typescript';
import { ensureNamedImport, removeImportDeclaration } from './imports';
import { applyEdits, findAll, indentationAt, lineOf, parseTypeScript, type TextEdit } from './source-text';

export interface TestingAppSwitch {
  readonly text: string;
  /** How many `createNestApplication(...)` calls now pass a FastifyAdapter. */
  readonly switched: number;
  /** Whether a `ready()` line was added after an `init()`. */
  readonly readied: boolean;
  /** Calls whose `init()` was not found, so `ready()` could not be added after it. */
  readonly withoutReady: readonly number[];
  /** Calls given something this schematic cannot tell apart from an Express adapter: left as they are. */
  readonly leftAlone: readonly number[];
}

const EXPRESS_APP_TYPE = 'NestExpressApplication';

/**
 * Test files build their app with `moduleRef.createNestApplication()` or
 * `createNestApplication<NestExpressApplication>({ logger: false })` (the specs `nest g rpc` writes
 * for an Express app), which run on Express when no adapter is given: after `--platform fastify`
 * they would test a platform the app no longer serves. Each such call gets `new FastifyAdapter()`
 * before its options, `NestExpressApplication` becomes `NestFastifyApplication` in the file, and
 * after the `await app.init()` that follows the call, `await app.getHttpAdapter().getInstance().ready()`:
 * supertest sends requests without calling `listen()`, and Fastify answers nothing until its
 * plugins are ready (Nest's documented recipe for testing on Fastify). An app handed to
 * `createRpcTestClient` needs no such line: it listens first.
 */
export function switchTestingAppsToFastify(path: string, text: string): TestingAppSwitch {
  const sourceFile = parseTypeScript(path, text);
  const calls = findAll(sourceFile, (node): node is ts.CallExpression =>
    ts.isCallExpression(node) &&
    ts.isPropertyAccessExpression(node.expression) &&
    node.expression.name.text === 'createNestApplication' &&
    !isFastifyAdapter(node.arguments[0]),
  );
  const edits: TextEdit[] = [];
  const withoutReady: number[] = [];
  const leftAlone: number[] = [];
  let switched = 0;
  let readied = false;
  for (const call of calls) {
    const first = call.arguments[0];
    if (first === undefined) edits.push({ start: call.arguments.pos, end: call.arguments.pos, text: 'new FastifyAdapter()' });
    else if (ts.isObjectLiteralExpression(first)) edits.push({ start: first.getStart(sourceFile), end: first.getStart(sourceFile), text: 'new FastifyAdapter(), ' });
    else {
      leftAlone.push(lineOf(call));
      continue;
    }
    switched++;
    const init = initStatementAfter(call);
    if (!init) {
      withoutReady.push(lineOf(call));
      continue;
    }
    if (init.readies) continue;
    const { statement, app } = init;
    const ready = `await ${app}.getHttpAdapter().getInstance().ready();`;
    const next = nextStatement(statement);
    if (next?.getText(sourceFile) === ready) continue;
    edits.push({ start: statement.getEnd(), end: statement.getEnd(), text: `\n${indentationAt(text, statement.getStart(sourceFile))}${ready}` });
    readied = true;
  }
  if (switched === 0) return { text, switched: 0, readied, withoutReady: [], leftAlone };

  const expressTypes = findAll(sourceFile, (node): node is ts.TypeReferenceNode => ts.isTypeReferenceNode(node) && node.typeName.getText(sourceFile) === EXPRESS_APP_TYPE);
  for (const reference of expressTypes) edits.push({ start: reference.getStart(sourceFile), end: reference.getEnd(), text: 'NestFastifyApplication' });
  let updated = applyEdits(text, edits);
  if (expressTypes.length > 0) {
    // `import type { NestExpressApplication } from '@nestjs/platform-express'` goes when that was all it imported.
    const expressImport = parseTypeScript(path, updated).statements.find(
      (s): s is ts.ImportDeclaration => ts.isImportDeclaration(s) && ts.isStringLiteral(s.moduleSpecifier) && s.moduleSpecifier.text === '@nestjs/platform-express' && importsOnly(s, EXPRESS_APP_TYPE),
    );
    if (expressImport) updated = removeImportDeclaration(updated, expressImport);
  }
  updated = ensureNamedImport(path, updated, { name: 'FastifyAdapter', from: '@nestjs/platform-fastify' });
  if (expressTypes.length > 0) updated = ensureNamedImport(path, updated, { name: 'NestFastifyApplication', from: '@nestjs/platform-fastify', typeOnly: true });
  return { text: updated, switched, readied, withoutReady, leftAlone };
}

function isFastifyAdapter(argument: ts.Expression | undefined): boolean {
  return argument !== undefined && ts.isNewExpression(argument) && ts.isIdentifier(argument.expression) && argument.expression.text === 'FastifyAdapter';
}

function importsOnly(declaration: ts.ImportDeclaration, name: string): boolean {
  const clause = declaration.importClause;
  const bindings = clause?.namedBindings;
  return !clause?.name && bindings !== undefined && ts.isNamedImports(bindings) && bindings.elements.length === 1 && bindings.elements[0].name.text === name;
}

/**
 * The `await <app>.init();` statement that follows the statement storing the app, in the same
 * block — or the statement handing the app to `createRpcTestClient(<app>)` (`readies`: it listens,
 * so Fastify is ready), whichever comes first.
 */
function initStatementAfter(call: ts.CallExpression): { statement: ts.Statement; app: string; readies?: true } | undefined {
  let node: ts.Node = call;
  while (!ts.isExpressionStatement(node) && !ts.isVariableStatement(node)) {
    if (!node.parent || ts.isBlock(node) || ts.isSourceFile(node)) return undefined;
    node = node.parent;
  }
  const storing = node;
  const app = storedIn(storing);
  const block = storing.parent;
  if (!app || !(ts.isBlock(block) || ts.isSourceFile(block))) return undefined;
  const statements = block.statements as ts.NodeArray<ts.Statement>;
  for (const statement of statements.slice(statements.indexOf(storing) + 1)) {
    if (handsToTestClient(statement, app)) return { statement, app, readies: true };
    if (!ts.isExpressionStatement(statement) || !ts.isAwaitExpression(statement.expression)) continue;
    const awaited = statement.expression.expression;
    if (
      ts.isCallExpression(awaited) &&
      ts.isPropertyAccessExpression(awaited.expression) &&
      awaited.expression.name.text === 'init' &&
      awaited.expression.expression.getText() === app
    ) {
      return { statement, app };
    }
  }
  return undefined;
}

/** Whether `statement` calls `createRpcTestClient(<app>)` (from `@nest-jsonrpc/server/testing`). */
function handsToTestClient(statement: ts.Statement, app: string): boolean {
  return findAll(statement, (node): node is ts.CallExpression =>
    ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'createRpcTestClient' && node.arguments[0]?.getText() === app,
  ).length > 0;
}

function storedIn(statement: ts.Statement): string | undefined {
  if (ts.isVariableStatement(statement)) {
    const [declaration] = statement.declarationList.declarations;
    return declaration && ts.isIdentifier(declaration.name) ? declaration.name.text : undefined;
  }
  if (ts.isExpressionStatement(statement) && ts.isBinaryExpression(statement.expression) && statement.expression.operatorToken.kind === ts.SyntaxKind.EqualsToken) {
    return statement.expression.left.getText();
  }
  return undefined;
}

function nextStatement(statement: ts.Statement): ts.Statement | undefined {
  const siblings = (statement.parent as ts.Block).statements;
  return siblings[siblings.indexOf(statement) + 1];
}
