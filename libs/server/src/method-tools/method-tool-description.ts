import type { RpcMethodDefinition } from '../registry/rpc-method-definition.js';
import { dereferenceRoot, standaloneSchema, type JsonSchemaObject } from '../schema/index.js';
import { isJsonSchemaObject } from '../schema/json-schema.js';

/**
 * How a method reads as a tool, for an MCP client (`mcp/`) and for an LLM (`toolset/`) alike:
 * `@RpcMcp({ description })`, else the `@RpcMethod` description, else its summary, else a
 * sentence naming the method — every tool has one, since agents choose tools by it (and MCP's
 * conformance runner asks for one).
 */
export function methodToolDescription(definition: RpcMethodDefinition): string {
  return definition.mcp?.description ?? definition.options.description ?? definition.options.summary ?? `Calls the JSON-RPC method "${definition.name}".`;
}

/**
 * A method's params as a tool's arguments: one standalone JSON Schema with an object root
 * (`type: 'object'`, `properties` always an object, the components it reaches under `$defs`; a
 * root that only refers to a component is that component). Undescribed params are an open
 * object, no params an empty closed one. Undefined when the params' own schema says they are not
 * an object (an `@RpcMethod({ params })` array schema): such a method takes no named arguments.
 */
export function methodToolParameters(definition: RpcMethodDefinition, components: Readonly<Record<string, JsonSchemaObject>>): JsonSchemaObject | undefined {
  const schema = definition.schemas.params.schema;
  if (!isJsonSchemaObject(schema)) return undefined;
  const root = dereferenceRoot(schema, components);
  if (root.type !== undefined && root.type !== 'object') return undefined;
  const objectRoot: JsonSchemaObject = { ...root, type: 'object', properties: isJsonSchemaObject(root.properties) ? root.properties : {} };
  return standaloneSchema(objectRoot, components) as JsonSchemaObject;
}
