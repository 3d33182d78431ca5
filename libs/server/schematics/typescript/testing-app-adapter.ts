import * as ts from 'typescript';
import { ensureNamedImport } from './imports';
import { applyEdits, findAll, indentationAt, lineOf, parseTypeScript, type TextEdit } from './source-text';

export interface TestingAppSwitch {
  readonly text: string;
  /** How many `createNestApplication()` calls now pass a FastifyAdapter. */
  readonly switched: number;
  /** Calls whose `init()` was not found, so `ready()` could not be added after it. */
  readonly withoutReady: readonly number[];
}

/**
 * Test files build their app with `moduleRef.createNestApplication()`, which picks Express when no
 * adapter is given; JsonRpcModule refuses Express. Each such call gets `new FastifyAdapter()`, and
 * after the `await app.init()` that follows it, `await app.getHttpAdapter().getInstance().ready()`:
 * supertest sends requests without calling `listen()`, and Fastify answers nothing until its
 * plugins are ready (Nest's documented recipe for testing on Fastify).
 */
export function switchTestingAppsToFastify(path: string, text: string): TestingAppSwitch {
  const sourceFile = parseTypeScript(path, text);
  const calls = findAll(sourceFile, (node): node is ts.CallExpression =>
    ts.isCallExpression(node) &&
    ts.isPropertyAccessExpression(node.expression) &&
    node.expression.name.text === 'createNestApplication' &&
    node.arguments.length === 0,
  );
  if (calls.length === 0) return { text, switched: 0, withoutReady: [] };

  const edits: TextEdit[] = [];
  const withoutReady: number[] = [];
  for (const call of calls) {
    edits.push({ start: call.arguments.pos, end: call.arguments.pos, text: 'new FastifyAdapter()' });
    const init = initStatementAfter(call);
    if (!init) {
      withoutReady.push(lineOf(call));
      continue;
    }
    const { statement, app } = init;
    const ready = `await ${app}.getHttpAdapter().getInstance().ready();`;
    const next = nextStatement(statement);
    if (next?.getText(sourceFile) === ready) continue;
    edits.push({ start: statement.getEnd(), end: statement.getEnd(), text: `\n${indentationAt(text, statement.getStart(sourceFile))}${ready}` });
  }
  const updated = ensureNamedImport(path, applyEdits(text, edits), { name: 'FastifyAdapter', from: '@nestjs/platform-fastify' });
  return { text: updated, switched: calls.length, withoutReady };
}

/** The `await <app>.init();` statement that follows the statement storing the app, in the same block. */
function initStatementAfter(call: ts.CallExpression): { statement: ts.Statement; app: string } | undefined {
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
