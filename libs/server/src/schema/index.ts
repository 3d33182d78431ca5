export { MethodSchemaBuilder } from './method-schema-builder.js';
export type { MethodSchemaInput, ParamsSource, NamedParamSource } from './method-schema-input.js';
export type { MethodSchemas, ParamsDescription, ParamDescriptor } from './method-schemas.js';
export type { SchemaFailure, SchemaProblem, SchemaProblemSink } from './schema-problem.js';
export { dereferenceRoot, reachableComponents, standaloneSchema } from './schema-references.js';
export { COMPONENT_REF_PREFIX, componentRef, deepFreeze, componentNameOf, type JsonSchema, type JsonSchemaObject, type ClassRef } from './json-schema.js';
