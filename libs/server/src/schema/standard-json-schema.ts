import type { StandardJSONSchemaV1, StandardSchemaV1 } from '../decorators/standard-schema.js';
import { cloneJson, componentRef, DATA_KEYWORDS, isJsonSchemaObject, mapRefs, type JsonSchemaObject } from './json-schema.js';
import type { SchemaComponents } from './schema-components.js';

/** Which side of a schema to describe: what it accepts (params) or what it gives (results, rows). */
export type StandardSchemaSide = 'input' | 'output';

/** The JSON Schema dialect asked of every library: the one MCP and OpenAPI 3.1 speak. */
const TARGET = 'draft-2020-12';

/**
 * The JSON Schema a Standard Schema gives of one side of itself (Standard JSON Schema:
 * `~standard.jsonSchema.input()/output()`), or why it gives none: the library has no converter,
 * or it refuses (zod and Valibot throw for a transform on the output side).
 */
export function standardJsonSchema(schema: StandardSchemaV1, side: StandardSchemaSide): { schema: JsonSchemaObject } | { problem: string } {
  const props = schema['~standard'] as StandardSchemaV1.Props & Partial<Pick<StandardJSONSchemaV1.Props, 'jsonSchema'>>;
  const vendor = typeof props.vendor === 'string' ? props.vendor : 'Standard Schema';
  const converter = props.jsonSchema;
  if (converter === null || typeof converter !== 'object' || typeof converter[side] !== 'function') {
    return {
      problem:
        `the ${vendor} schema has no JSON Schema converter (~standard.jsonSchema): zod >= 4.2 and ArkType >= 2.1.28 have one, ` +
        'a Valibot schema gets one from toStandardJsonSchema() of @valibot/to-json-schema',
    };
  }
  let converted: unknown;
  try {
    converted = converter[side]({ target: TARGET });
  } catch (error) {
    return { problem: `the ${vendor} schema cannot describe its ${side} as JSON Schema (${error instanceof Error ? error.message : String(error)})` };
  }
  let copy: unknown;
  try {
    copy = cloneJson(converted);
  } catch {
    copy = undefined;
  }
  if (!isJsonSchemaObject(copy)) return { problem: `the ${vendor} schema's JSON Schema is not a JSON object` };
  return { schema: copy };
}

/** The local key of the converted root when something refers to it with `$ref: "#"` (zod's recursion). */
const ROOT_KEY = '\u0000root';

/**
 * A converted schema made to live in a document with other methods: its `$defs` (or draft-07
 * `definitions`) become shared components, named after their keys (zod's `.meta({ id })`), their
 * `$ref`s rewritten to `#/components/schemas/<name>`, `$schema` dropped. Two methods whose
 * definitions have the same key and the same content (with everything they reach) share one
 * component; the same key with other content gets `Name_<side>`, then `Name_2`. A root that only
 * refers to one of its definitions (zod's schema with an id, ArkType's recursive one) stays that
 * reference, unless `unwrapRoot` (the params object, whose properties are listed one by one) asks
 * for the definition's content; a root a definition refers back to (`$ref: "#"`) is also a
 * component, named `rootName`.
 */
export function adoptDefinitions(
  converted: JsonSchemaObject,
  { rootName, side, unwrapRoot, components }: { rootName: string; side: StandardSchemaSide; unwrapRoot: boolean; components: SchemaComponents },
): JsonSchemaObject {
  const { $schema: _dialect, $defs, definitions, ...rest } = converted;
  const defs = new Map<string, unknown>([...entriesOf(definitions), ...entriesOf($defs)]);
  let root: JsonSchemaObject = rest;
  const wrapped = typeof rest.$ref === 'string' ? localKey(rest.$ref) : undefined;
  if (unwrapRoot && wrapped !== undefined && wrapped !== ROOT_KEY && isJsonSchemaObject(defs.get(wrapped))) {
    const { $ref: _ref, ...annotations } = rest;
    root = { ...(defs.get(wrapped) as JsonSchemaObject), ...annotations };
  }
  if (defs.size === 0 && !refersTo(root, ROOT_KEY)) return root;
  if (refersTo(root, ROOT_KEY) || [...defs.values()].some((d) => refersTo(d, ROOT_KEY))) defs.set(ROOT_KEY, root);

  const names = new Map<string, string>();
  const fresh: string[] = [];
  const used = reachable([root], defs);
  for (const key of defs.keys()) {
    if (!used.has(key)) continue;
    const adopted = components.adopt(key === ROOT_KEY ? rootName : key, side, signatureOf(key, defs));
    names.set(key, adopted.name);
    if (adopted.fresh) fresh.push(key);
  }
  const rewrite = (value: unknown): unknown =>
    mapRefs(value, (ref) => {
      const key = localKey(ref);
      const name = key === undefined ? undefined : names.get(key);
      return name === undefined ? undefined : (componentRef(name).$ref as string);
    });
  for (const key of fresh) components.define(names.get(key)!, rewrite(defs.get(key)) as JsonSchemaObject);
  return rewrite(root) as JsonSchemaObject;
}

function entriesOf(value: unknown): Array<[string, unknown]> {
  return isJsonSchemaObject(value) ? Object.entries(value) : [];
}

/** The definition key a local `$ref` names (`#`, `#/$defs/<key>`, `#/definitions/<key>`), else undefined. */
function localKey(ref: string): string | undefined {
  if (ref === '#') return ROOT_KEY;
  const match = /^#\/(?:\$defs|definitions)\/([^/]+)$/.exec(ref);
  if (!match) return undefined;
  try {
    return decodeURIComponent(match[1]).replace(/~1/g, '/').replace(/~0/g, '~');
  } catch {
    return undefined;
  }
}

/** Every local `$ref` target inside `value` (not inside data keywords). */
function localRefs(value: unknown, found: Set<string> = new Set()): Set<string> {
  if (Array.isArray(value)) {
    for (const item of value) localRefs(item, found);
  } else if (isJsonSchemaObject(value)) {
    for (const [k, child] of Object.entries(value)) {
      if (k === '$ref' && typeof child === 'string') {
        const key = localKey(child);
        if (key !== undefined) found.add(key);
      } else if (!DATA_KEYWORDS.has(k)) localRefs(child, found);
    }
  }
  return found;
}

function refersTo(value: unknown, key: string): boolean {
  return localRefs(value).has(key);
}

/** The definition keys `from` reaches, through definitions too. */
function reachable(from: readonly unknown[], defs: ReadonlyMap<string, unknown>): Set<string> {
  const seen = new Set<string>();
  const queue = from.flatMap((value) => [...localRefs(value)]);
  while (queue.length) {
    const key = queue.pop()!;
    if (seen.has(key) || !defs.has(key)) continue;
    seen.add(key);
    queue.push(...localRefs(defs.get(key)));
  }
  return seen;
}

/** A definition's content with everything it reaches: equal signatures describe equal schemas. */
function signatureOf(key: string, defs: ReadonlyMap<string, unknown>): string {
  const closure = [key, ...[...reachable([defs.get(key)], defs)].filter((k) => k !== key).sort()];
  return JSON.stringify(closure.map((k) => [k, defs.get(k)]));
}
