import * as ts from 'typescript';
import { parseTypeScript, quoteOf } from './source-text';

export interface NamedImport {
  readonly name: string;
  readonly from: string;
  /** Import it as `type Name` (it is only used as a type). */
  readonly typeOnly?: boolean;
}

/**
 * Makes `name` importable from `from`: nothing when it already is, an extra name in an existing
 * `import { ... } from 'from'`, else a new import line. New package imports go after the last package
 * import and relative ones after the last import, the order Nest's own files use.
 */
export function ensureNamedImport(path: string, text: string, wanted: NamedImport): string {
  const sourceFile = parseTypeScript(path, text);
  const imports = sourceFile.statements.filter(ts.isImportDeclaration);
  const fromSameModule = imports.filter((d) => ts.isStringLiteral(d.moduleSpecifier) && d.moduleSpecifier.text === wanted.from);

  for (const declaration of fromSameModule) {
    const bindings = declaration.importClause?.namedBindings;
    if (bindings && ts.isNamedImports(bindings) && bindings.elements.some((e) => e.name.text === wanted.name)) return text;
  }
  const specifier = wanted.typeOnly ? `type ${wanted.name}` : wanted.name;
  for (const declaration of fromSameModule) {
    const clause = declaration.importClause;
    const bindings = clause?.namedBindings;
    // A value cannot join `import type { ... }`; a namespace import has no braces to join.
    if (!clause || !bindings || !ts.isNamedImports(bindings) || (clause.isTypeOnly && !wanted.typeOnly)) continue;
    const elements = bindings.elements;
    if (elements.length === 0) return insert(text, bindings.getStart(sourceFile) + 1, ` ${specifier} `);
    return insert(text, elements[elements.length - 1].getEnd(), `, ${specifier}`);
  }

  const quote = quoteOf(sourceFile);
  const line = `import { ${specifier} } from ${quote}${wanted.from}${quote};`;
  const isRelative = (d: ts.ImportDeclaration) => ts.isStringLiteral(d.moduleSpecifier) && d.moduleSpecifier.text.startsWith('.');
  const anchor = wanted.from.startsWith('.') ? imports[imports.length - 1] : [...imports].reverse().find((d) => !isRelative(d));
  if (anchor) return insert(text, anchor.getEnd(), `\n${line}`);
  if (imports.length > 0) return insert(text, imports[0].getStart(sourceFile), `${line}\n`);
  return `${line}\n${text.startsWith('\n') ? '' : '\n'}${text}`;
}

/** Removes a whole import declaration, with its line. */
export function removeImportDeclaration(text: string, declaration: ts.ImportDeclaration): string {
  const start = declaration.getStart(declaration.getSourceFile());
  let end = declaration.getEnd();
  if (text[end] === '\n') end++;
  return text.slice(0, start) + text.slice(end);
}

/** Where a file imports `localName` from, and under which exported name (`default` for a default import). */
export function importSourceOf(sourceFile: ts.SourceFile, localName: string): { from: string; importedName: string } | undefined {
  for (const declaration of sourceFile.statements.filter(ts.isImportDeclaration)) {
    const clause = declaration.importClause;
    if (!clause || !ts.isStringLiteral(declaration.moduleSpecifier)) continue;
    const from = declaration.moduleSpecifier.text;
    if (clause.name?.text === localName) return { from, importedName: 'default' };
    const bindings = clause.namedBindings;
    const element = bindings && ts.isNamedImports(bindings) ? bindings.elements.find((e) => e.name.text === localName) : undefined;
    if (element) return { from, importedName: (element.propertyName ?? element.name).text };
  }
  return undefined;
}

function insert(text: string, position: number, addition: string): string {
  return text.slice(0, position) + addition + text.slice(position);
}
