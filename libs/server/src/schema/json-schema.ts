/**
 * The JSON Schema vocabulary this folder produces. Schemas are plain JSON values: every keyword we
 * emit means the same in JSON Schema 2020-12 and in draft-07 (which OpenRPC 1.3.2's meta-schema
 * checks), so one schema serves OpenRPC, the explorer, generated clients and MCP tools.
 */
export type JsonSchema = JsonSchemaObject | boolean;

export interface JsonSchemaObject {
  [keyword: string]: unknown;
}

/** Where component schemas live and how `$ref`s name them (the OpenRPC document's layout). */
export const COMPONENT_REF_PREFIX = '#/components/schemas/';

/** A class, as decorator options and design types carry it. */
export type ClassRef = abstract new (...args: any[]) => unknown;

export function componentRef(name: string): JsonSchemaObject {
  return { $ref: COMPONENT_REF_PREFIX + name };
}

/** The component name a `$ref` points at, or undefined for any other reference. */
export function componentNameOf(ref: unknown): string | undefined {
  return typeof ref === 'string' && ref.startsWith(COMPONENT_REF_PREFIX) ? ref.slice(COMPONENT_REF_PREFIX.length) : undefined;
}

/** `enum`, `const`, `default` and `examples` hold data, not schemas: a `$ref` key there is a value. */
export const DATA_KEYWORDS: ReadonlySet<string> = new Set(['enum', 'const', 'default', 'examples']);

/** A copy of a schema with each `$ref` that `replace` answers for replaced (data keywords left alone). */
export function mapRefs(value: unknown, replace: (ref: string) => string | undefined): unknown {
  if (Array.isArray(value)) return value.map((item) => mapRefs(item, replace));
  if (!isJsonSchemaObject(value)) return value;
  const out: JsonSchemaObject = {};
  for (const [key, child] of Object.entries(value)) {
    const replaced = key === '$ref' && typeof child === 'string' ? replace(child) : undefined;
    out[key] = replaced !== undefined ? replaced : DATA_KEYWORDS.has(key) ? child : mapRefs(child, replace);
  }
  return out;
}

export function isJsonSchemaObject(value: unknown): value is JsonSchemaObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Freezes a JSON value and everything in it (schemas are built once and shared). */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value as object)) deepFreeze(child);
  }
  return value;
}

/** Copies a JSON value (an app's schema literal must not be frozen or changed under its feet). */
export function cloneJson<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}
