import { componentNameOf, isJsonSchemaObject, type JsonSchema, type JsonSchemaObject } from './json-schema.js';

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
    for (const [key, child] of Object.entries(value)) {
      // `enum`, `const`, `default` and `examples` hold data, not schemas: a `$ref` key there is a value.
      if (key !== 'enum' && key !== 'const' && key !== 'default' && key !== 'examples') visit(child);
    }
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
  const rewrite = (value: unknown, dataKey: boolean): unknown => {
    if (dataKey) return value;
    if (Array.isArray(value)) return value.map((item) => rewrite(item, false));
    if (!isJsonSchemaObject(value)) return value;
    const out: JsonSchemaObject = {};
    for (const [key, child] of Object.entries(value)) {
      const name = key === '$ref' ? componentNameOf(child) : undefined;
      out[key] = name !== undefined ? `#/$defs/${name}` : rewrite(child, key === 'enum' || key === 'const' || key === 'default' || key === 'examples');
    }
    return out;
  };
  const root = typeof schema === 'boolean' ? { allOf: [schema] } : (rewrite(schema, false) as JsonSchemaObject);
  const defs = Object.fromEntries(names.map((name) => [name, rewrite(components[name], false)]));
  return { ...root, $defs: { ...(isJsonSchemaObject(root.$defs) ? root.$defs : {}), ...defs } };
}
