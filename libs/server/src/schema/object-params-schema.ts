import { isJsonSchemaObject, type JsonSchemaObject } from './json-schema.js';
import type { ParamsDescription } from './method-schemas.js';
import { standaloneSchema } from './schema-references.js';

/**
 * A method's params as one standalone JSON Schema with an object root (`type: 'object'`,
 * `properties` always an object, the components it reaches under `$defs`): what LLM tools and MCP
 * tools take as their arguments' schema. Undescribed params become an open object. Undefined when
 * the params' own schema says they are not an object (an `@RpcMethod({ params })` array schema):
 * such a method cannot take named arguments.
 */
export function objectParamsSchema(params: ParamsDescription, components: Readonly<Record<string, JsonSchemaObject>>): JsonSchemaObject | undefined {
  const schema = params.schema;
  if (!isJsonSchemaObject(schema)) return undefined;
  if (schema.type !== undefined && schema.type !== 'object') return undefined;
  const root: JsonSchemaObject = { ...schema, type: 'object', properties: isJsonSchemaObject(schema.properties) ? schema.properties : {} };
  return standaloneSchema(root, components) as JsonSchemaObject;
}
