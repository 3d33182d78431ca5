import * as ts from 'typescript';
import { indentationAt, propertyNameOf, spansLines } from './source-text';

/**
 * Text edits inside object and array literals that keep the file's own layout: an item joins a
 * one-line literal on that line and a multi-line literal on a line of its own, with the indentation
 * and the trailing comma the literal already uses. The rest of the file is left byte for byte.
 */

/** Why an edit could not be made: the caller turns it into a message with manual steps. */
export class NotALiteral extends Error {
  constructor(readonly node: ts.Node) {
    super(`not a literal: ${node.getText()}`);
  }
}

export function findProperty(object: ts.ObjectLiteralExpression, name: string): ts.ObjectLiteralElementLike | undefined {
  return object.properties.find((p) => p.name !== undefined && propertyNameOf(p.name as ts.PropertyName) === name);
}

/** Adds `propertyText` (`key: value`) as the first or last property of `object`. */
export function insertProperty(text: string, object: ts.ObjectLiteralExpression, propertyText: string, where: 'first' | 'last'): string {
  const sourceFile = object.getSourceFile();
  const properties = object.properties;
  if (properties.length === 0) {
    return text.slice(0, object.getStart(sourceFile)) + `{ ${propertyText} }` + text.slice(object.getEnd());
  }
  const first = properties[0];
  const multiLine = spansLines(text, object.getStart(sourceFile), first.getStart(sourceFile));
  if (where === 'first') {
    const position = first.getStart(sourceFile);
    const separator = multiLine ? `,\n${indentationAt(text, position)}` : ', ';
    return text.slice(0, position) + propertyText + separator + text.slice(position);
  }
  return appendItem(text, properties, propertyText, multiLine);
}

/**
 * Makes `object[property]` an array holding an element for which `isPresent` is true, adding
 * `elementText` when none is (and the property itself when missing). Returns `text` unchanged when
 * the element is there already. Throws NotALiteral when the property is not an array literal.
 */
export function ensureArrayElement(
  text: string,
  object: ts.ObjectLiteralExpression,
  property: string,
  elementText: string,
  isPresent: (element: ts.Expression) => boolean,
  where: 'first' | 'last',
): string {
  const existing = findProperty(object, property);
  if (!existing) return insertProperty(text, object, `${property}: [${elementText}]`, where);
  if (!ts.isPropertyAssignment(existing) || !ts.isArrayLiteralExpression(existing.initializer)) throw new NotALiteral(existing);
  const array = existing.initializer;
  if (array.elements.some(isPresent)) return text;
  if (array.elements.length === 0) {
    const position = array.getEnd() - 1;
    return text.slice(0, position) + elementText + text.slice(position);
  }
  const sourceFile = array.getSourceFile();
  const multiLine = spansLines(text, array.getStart(sourceFile), array.elements[0].getStart(sourceFile));
  return appendItem(text, array.elements, elementText, multiLine);
}

/**
 * Makes the nested property `path` of `object` hold a value for which `matches` is true, writing
 * `valueText` otherwise: missing levels are created (`{ stream: { enabled: true } }`), a different
 * value is replaced. Throws NotALiteral when a level on the way is not an object literal.
 */
export function ensurePropertyPath(
  text: string,
  object: ts.ObjectLiteralExpression,
  path: readonly string[],
  valueText: string,
  matches: (value: ts.Expression) => boolean,
): string {
  const [key, ...rest] = path;
  const existing = findProperty(object, key);
  if (!existing) return insertProperty(text, object, `${key}: ${nestedValue(rest, valueText)}`, 'last');
  if (!ts.isPropertyAssignment(existing)) throw new NotALiteral(existing);
  const value = existing.initializer;
  if (rest.length === 0) {
    if (matches(value)) return text;
    return text.slice(0, value.getStart(value.getSourceFile())) + valueText + text.slice(value.getEnd());
  }
  if (!ts.isObjectLiteralExpression(value)) throw new NotALiteral(value);
  return ensurePropertyPath(text, value, rest, valueText, matches);
}

/** `{ a: { b: value } }` for the path [a, b]; the value itself for an empty path. */
export function nestedValue(path: readonly string[], valueText: string): string {
  return path.reduceRight((inner, key) => `{ ${key}: ${inner} }`, valueText);
}

function appendItem(text: string, items: ts.NodeArray<ts.Node>, itemText: string, multiLine: boolean): string {
  const last = items[items.length - 1];
  const sourceFile = last.getSourceFile();
  if (!multiLine) return text.slice(0, last.getEnd()) + `, ${itemText}` + text.slice(last.getEnd());
  const indentation = indentationAt(text, items[0].getStart(sourceFile));
  if (items.hasTrailingComma) {
    const afterComma = text.indexOf(',', last.getEnd()) + 1;
    return text.slice(0, afterComma) + `\n${indentation}${itemText},` + text.slice(afterComma);
  }
  return text.slice(0, last.getEnd()) + `,\n${indentation}${itemText}` + text.slice(last.getEnd());
}
