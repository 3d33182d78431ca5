import * as ts from 'typescript';
import { ManualStepsRequired } from '../report/manual-steps-required';
import { ensureNamedImport } from './imports';
import { ensureArrayElement, NotALiteral } from './object-literal';
import { lineOf, parseTypeScript } from './source-text';

export interface ModuleClass {
  readonly declaration: ts.ClassDeclaration;
  /** The object literal passed to `@Module(...)`. */
  readonly metadata: ts.ObjectLiteralExpression;
}

/** Classes decorated with `@Module(...)` (Nest's decorator; an aliased import is not recognised). */
export function moduleClassesOf(sourceFile: ts.SourceFile): ts.ClassDeclaration[] {
  return sourceFile.statements.filter(
    (s): s is ts.ClassDeclaration => ts.isClassDeclaration(s) && moduleDecoratorOf(s) !== undefined,
  );
}

function moduleDecoratorOf(declaration: ts.ClassDeclaration): ts.CallExpression | undefined {
  for (const decorator of ts.getDecorators(declaration) ?? []) {
    const call = decorator.expression;
    if (ts.isCallExpression(call) && ts.isIdentifier(call.expression) && call.expression.text === 'Module') return call;
  }
  return undefined;
}

/**
 * The `@Module` class named `className` (or the file's only one) and its metadata object. Throws
 * ManualStepsRequired, saying what to add by hand, when there is none or its metadata is not a literal.
 */
export function findModuleClass(path: string, sourceFile: ts.SourceFile, className: string | undefined, byHand: string): ModuleClass {
  const classes = moduleClassesOf(sourceFile);
  const declaration = className ? classes.find((c) => c.name?.text === className) : classes[0];
  if (!declaration) {
    const what = className ? `no @Module() class named ${className}` : 'no @Module() class';
    throw new ManualStepsRequired(`${path} has ${what}.`, [byHand]);
  }
  const call = moduleDecoratorOf(declaration)!;
  const metadata = call.arguments[0];
  if (call.arguments.length === 0) {
    throw new ManualStepsRequired(`${path}: @Module() on line ${lineOf(call)} has no metadata object.`, [byHand]);
  }
  if (!ts.isObjectLiteralExpression(metadata)) {
    throw new ManualStepsRequired(
      `${path}: the @Module() metadata on line ${lineOf(call)} is \`${metadata.getText()}\`, not an object literal this schematic can edit.`,
      [byHand],
    );
  }
  return { declaration, metadata };
}

export interface ModuleEntry {
  /** `imports` or `providers`. */
  readonly property: 'imports' | 'providers';
  /** The array element to add, as source text (`HelloRpc`, `JsonRpcModule.forRoot()`). */
  readonly element: string;
  /** Whether an existing element already is the wanted one. */
  readonly isPresent: (element: ts.Expression) => boolean;
  /** What the element needs imported. */
  readonly importName: string;
  readonly importFrom: string;
}

/**
 * Adds an entry to a module's `imports` or `providers` (creating the array when missing: `imports`
 * first, `providers` last, Nest's usual order) and imports what it names. Unchanged text when the
 * entry is already there.
 */
export function addToModule(path: string, text: string, className: string | undefined, entry: ModuleEntry, byHand: string): string {
  const { metadata } = findModuleClass(path, parseTypeScript(path, text), className, byHand);
  let updated: string;
  try {
    updated = ensureArrayElement(text, metadata, entry.property, entry.element, entry.isPresent, entry.property === 'imports' ? 'first' : 'last');
  } catch (error) {
    if (!(error instanceof NotALiteral)) throw error;
    throw new ManualStepsRequired(
      `${path}: \`${error.node.getText()}\` on line ${lineOf(error.node)} is not an array literal this schematic can edit.`,
      [byHand],
    );
  }
  if (updated === text) return text;
  return ensureNamedImport(path, updated, { name: entry.importName, from: entry.importFrom });
}

/** An array element that is `name` itself, or a call on it (`name.forRoot(...)`). */
export function refersTo(name: string): (element: ts.Expression) => boolean {
  return (element) => {
    const target = ts.isCallExpression(element) ? element.expression : element;
    const base = ts.isPropertyAccessExpression(target) ? target.expression : target;
    return ts.isIdentifier(base) && base.text === name;
  };
}
