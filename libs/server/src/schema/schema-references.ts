import { componentNameOf, DATA_KEYWORDS, isJsonSchemaObject, mapRefs, type JsonSchema, type JsonSchemaObject } from './json-schema.js';

/**
 * The names of the components `roots` reach, following `$ref`s through components too, in the
 * order first reached. A document that includes only these leaks no schema of a method it omits.
 */
export function reachableComponents(roots: Iterable<unknown>, components: Readonly<Record<string, JsonSchemaObject>>): string[] {
  const found: string[] = [];
  const seen = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (const item of value) visit(item);
      return;
    }
    if (!isJsonSchemaObject(value)) return;
    const name = componentNameOf(value.$ref);
    if (name !== undefined && !seen.has(name) && Object.hasOwn(components, name)) {
      seen.add(name);
      found.push(name);
      visit(components[name]);
    }
    for (const [key, child] of Object.entries(value)) if (!DATA_KEYWORDS.has(key)) visit(child);
  };
  for (const root of roots) visit(root);
  return found;
}

/**
 * `schema` as a standalone JSON Schema 2020-12 document: the components it reaches under `$defs`,
 * `$ref`s rewritten to `#/$defs/<name>`. For consumers that take one schema (MCP tools, ajv).
 */
export function standaloneSchema(schema: JsonSchema, components: Readonly<Record<string, JsonSchemaObject>>): JsonSchema {
  const names = reachableComponents([schema], components);
  if (names.length === 0) return schema;
  const rewrite = (value: unknown): unknown =>
    mapRefs(value, (ref) => {
      const name = componentNameOf(ref);
      return name === undefined ? undefined : `#/$defs/${name}`;
    });
  const root = typeof schema === 'boolean' ? { allOf: [schema] } : (rewrite(schema) as JsonSchemaObject);
  const defs = Object.fromEntries(names.map((name) => [name, rewrite(components[name])]));
  return { ...root, $defs: { ...(isJsonSchemaObject(root.$defs) ? root.$defs : {}), ...defs } };
}

/** A root that is only a `$ref` to a component (a result DTO) becomes that component's schema, its own keywords kept. */
export function dereferenceRoot(schema: JsonSchemaObject, components: Readonly<Record<string, JsonSchemaObject>>): JsonSchemaObject {
  const name = componentNameOf(schema.$ref);
  if (name === undefined || !Object.hasOwn(components, name)) return schema;
  const { $ref: _ref, ...rest } = schema;
  return { ...components[name]!, ...rest };
}
