import * as ts from 'typescript';
import { ManualStepsRequired } from '../report/manual-steps-required';

/**
 * Parses TypeScript for editing, refusing files with syntax errors: an edit computed from a tree
 * the parser had to guess at could land anywhere. `transpileModule` is the public API that reports
 * exactly the syntactic diagnostics (no type checking, no program).
 */
export function parseTypeScript(path: string, text: string): ts.SourceFile {
  const { diagnostics = [] } = ts.transpileModule(text, {
    fileName: path,
    reportDiagnostics: true,
    compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, experimentalDecorators: true },
  });
  const syntaxErrors = diagnostics.filter((d) => d.file && d.category === ts.DiagnosticCategory.Error);
  if (syntaxErrors.length > 0) {
    const first = syntaxErrors[0];
    const { line, character } = first.file!.getLineAndCharacterOfPosition(first.start ?? 0);
    throw new ManualStepsRequired(
      `${path} could not be parsed (line ${line + 1}, column ${character + 1}: ` +
        `${ts.flattenDiagnosticMessageText(first.messageText, ' ')}).`,
      [`Fix the syntax error in ${path} and run the command again.`],
    );
  }
  return ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
}

/** One replacement of `text.slice(start, end)`; positions refer to the text the edits were computed on. */
export interface TextEdit {
  readonly start: number;
  readonly end: number;
  readonly text: string;
}

/** Applies edits computed on one parse of `text`, from the last position to the first so positions stay valid. */
export function applyEdits(text: string, edits: readonly TextEdit[]): string {
  return [...edits]
    .sort((a, b) => b.start - a.start || b.end - a.end)
    .reduce((out, edit) => out.slice(0, edit.start) + edit.text + out.slice(edit.end), text);
}

/** 1-based line of a node, for messages that point the user at the code. */
export function lineOf(node: ts.Node): number {
  const sourceFile = node.getSourceFile();
  return sourceFile.getLineAndCharacterOfPosition(node.getStart(sourceFile)).line + 1;
}

/** The whitespace that starts the line `position` is on. */
export function indentationAt(text: string, position: number): string {
  const lineStart = text.lastIndexOf('\n', position - 1) + 1;
  return /^[ \t]*/.exec(text.slice(lineStart))![0];
}

/** Whether two positions are on different lines. */
export function spansLines(text: string, from: number, to: number): boolean {
  return text.slice(from, to).includes('\n');
}

/** The quote character the file's imports use (Nest's Prettier config: single). */
export function quoteOf(sourceFile: ts.SourceFile): string {
  for (const statement of sourceFile.statements) {
    if (ts.isImportDeclaration(statement)) return statement.moduleSpecifier.getText(sourceFile).startsWith('"') ? '"' : "'";
  }
  return "'";
}

/** The name of a property, for identifiers and string literals; undefined for computed names. */
export function propertyNameOf(name: ts.PropertyName): string | undefined {
  return ts.isIdentifier(name) || ts.isStringLiteral(name) ? name.text : undefined;
}

/** Every node below `root` (depth first) that satisfies `match`. */
export function findAll<T extends ts.Node>(root: ts.Node, match: (node: ts.Node) => node is T): T[] {
  const found: T[] = [];
  const visit = (node: ts.Node): void => {
    if (match(node)) found.push(node);
    ts.forEachChild(node, visit);
  };
  visit(root);
  return found;
}
