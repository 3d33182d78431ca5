import * as ts from 'typescript';
import { ensurePropertyPath, nestedValue, NotALiteral } from './object-literal';
import { findAll, lineOf, parseTypeScript, quoteOf } from './source-text';

/** One option `JsonRpcModule.forRoot(...)` must carry, e.g. `stream.enabled: true`. */
export interface ModuleOption {
  readonly path: readonly string[];
  /** Source text of the value. */
  readonly value: (quote: string) => string;
  readonly matches: (value: ts.Expression) => boolean;
  /** How the option reads in a message: `stream: { enabled: true }`. */
  readonly display: string;
}

export function enabledOption(section: string): ModuleOption {
  return {
    path: [section, 'enabled'],
    value: () => 'true',
    matches: (value) => value.kind === ts.SyntaxKind.TrueKeyword,
    display: `${section}: { enabled: true }`,
  };
}

export function pathOption(route: string): ModuleOption {
  return {
    path: ['path'],
    value: (quote) => `${quote}${route}${quote}`,
    matches: (value) => ts.isStringLiteralLike(value) && value.text === route,
    display: `path: '${route}'`,
  };
}

/** The `JsonRpcModule.forRoot(...)` / `forRootAsync(...)` calls of a file. */
export function jsonRpcModuleCalls(sourceFile: ts.SourceFile): ts.CallExpression[] {
  return findAll(sourceFile, (node): node is ts.CallExpression => {
    if (!ts.isCallExpression(node) || !ts.isPropertyAccessExpression(node.expression)) return false;
    const { expression, name } = node.expression;
    return ts.isIdentifier(expression) && expression.text === 'JsonRpcModule' && (name.text === 'forRoot' || name.text === 'forRootAsync');
  });
}

/** The options the file's JsonRpcModule call lacks, or why they cannot be written. */
export type OptionsEdit = { readonly text: string } | { readonly blockedAt: string };

/**
 * Writes the options into the file's one `JsonRpcModule.forRoot(...)` call: `forRoot()` becomes
 * `forRoot({ stream: { enabled: true } })`, an options literal gains or corrects the properties.
 * `forRootAsync` and options built elsewhere (a variable, a spread) cannot be edited safely: the
 * result says where, for a message.
 */
export function ensureModuleOptions(path: string, text: string, options: readonly ModuleOption[]): OptionsEdit {
  let current = text;
  for (const option of options) {
    const sourceFile = parseTypeScript(path, current);
    const [call] = jsonRpcModuleCalls(sourceFile);
    const where = `${path} line ${lineOf(call)}`;
    const method = (call.expression as ts.PropertyAccessExpression).name.text;
    const value = option.value(quoteOf(sourceFile));
    if (method !== 'forRoot') return { blockedAt: `${where} (JsonRpcModule.${method})` };
    const [argument] = call.arguments;
    if (!argument) {
      const open = call.arguments.pos;
      current = current.slice(0, open) + nestedValue(option.path, value) + current.slice(open);
      continue;
    }
    if (!ts.isObjectLiteralExpression(argument)) return { blockedAt: `${where} (options \`${argument.getText()}\`)` };
    try {
      current = ensurePropertyPath(current, argument, option.path, value, option.matches);
    } catch (error) {
      if (!(error instanceof NotALiteral)) throw error;
      return { blockedAt: `${path} line ${lineOf(error.node)} (\`${error.node.getText()}\`)` };
    }
  }
  return { text: current };
}
