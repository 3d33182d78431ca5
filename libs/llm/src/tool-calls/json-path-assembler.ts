/**
 * Rebuilds an arguments object from Gemini's streamed function-call arguments (Vertex AI
 * `streamFunctionCallArguments`): each `partialArgs` entry sets the value at a JSON path
 * (`$.city`, `$.stops[1].name`), and a string value with `willContinue` is followed by more pieces
 * of the same string. No library covers this shape; it is small and tested beside this file.
 */

export interface PartialArgument {
  jsonPath?: string;
  stringValue?: string;
  numberValue?: number;
  boolValue?: boolean;
  nullValue?: unknown;
  willContinue?: boolean;
}

type Key = string | number;

export class JsonPathAssembler {
  private root: Record<string, unknown> = {};
  /** Paths whose string value is still arriving. */
  private readonly openStrings = new Set<string>();

  add(partial: PartialArgument): void {
    if (!partial.jsonPath) return;
    const keys = parseJsonPath(partial.jsonPath);
    if (!keys.length) return;
    let value: unknown;
    if (partial.stringValue !== undefined) {
      const previous = this.openStrings.has(partial.jsonPath) ? getAt(this.root, keys) : undefined;
      value = typeof previous === 'string' ? previous + partial.stringValue : partial.stringValue;
      if (partial.willContinue) this.openStrings.add(partial.jsonPath);
      else this.openStrings.delete(partial.jsonPath);
    } else if (partial.numberValue !== undefined) value = partial.numberValue;
    else if (partial.boolValue !== undefined) value = partial.boolValue;
    else if ('nullValue' in partial) value = null;
    else return;
    setAt(this.root, keys, value);
  }

  /** The assembled object, and a fresh assembler state for the next call. */
  take(): Record<string, unknown> {
    const result = this.root;
    this.root = {};
    this.openStrings.clear();
    return result;
  }
}

/** `$.a.b[0]["c d"]['e']` -> ['a', 'b', 0, 'c d', 'e']; anything unparsable yields []. */
export function parseJsonPath(path: string): Key[] {
  if (!path.startsWith('$')) return [];
  const keys: Key[] = [];
  let i = 1;
  while (i < path.length) {
    const ch = path[i];
    if (ch === '.') {
      let end = i + 1;
      while (end < path.length && path[end] !== '.' && path[end] !== '[') end++;
      if (end === i + 1) return [];
      keys.push(path.slice(i + 1, end));
      i = end;
    } else if (ch === '[') {
      const quote = path[i + 1];
      if (quote === '"' || quote === "'") {
        const close = path.indexOf(`${quote}]`, i + 2);
        if (close === -1) return [];
        keys.push(path.slice(i + 2, close));
        i = close + 2;
      } else {
        const close = path.indexOf(']', i);
        if (close <= i + 1) return [];
        const index = Number(path.slice(i + 1, close));
        if (!Number.isInteger(index) || index < 0) return [];
        keys.push(index);
        i = close + 1;
      }
    } else return [];
  }
  return keys;
}

function getAt(root: unknown, keys: Key[]): unknown {
  let node: any = root;
  for (const key of keys) {
    if (node === null || typeof node !== 'object') return undefined;
    node = node[key];
  }
  return node;
}

function setAt(root: Record<string, unknown>, keys: Key[], value: unknown): void {
  let node: any = root;
  for (let i = 0; i < keys.length - 1; i++) {
    const key = keys[i];
    if (key === '__proto__' || key === 'constructor' || key === 'prototype') return;
    if (node[key] === null || typeof node[key] !== 'object') node[key] = typeof keys[i + 1] === 'number' ? [] : {};
    node = node[key];
  }
  const last = keys[keys.length - 1];
  if (last === '__proto__' || last === 'constructor' || last === 'prototype') return;
  node[last] = value;
}
