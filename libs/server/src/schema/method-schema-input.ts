import type { StandardSchemaV1 } from '../decorators/standard-schema.js';
import type { ClassRef, JsonSchema, JsonSchemaObject } from './json-schema.js';

/**
 * What the registry knows about one method, in the shape the schema builder reads. The registry
 * fills it from the method's param plan and decorator options; nothing here touches Nest.
 */
export interface MethodSchemaInput {
  params: ParamsSource;
  /**
   * `@RpcMethod(name, { result })`: a class (described from its class-validator decorators), a
   * Standard Schema (described by its output side) or a JSON Schema.
   */
  result?: ClassRef | StandardSchemaV1 | JsonSchema;
  /** `@RpcMethod(name, { jsonSchema: { result } })`: describes a Standard Schema `result` instead of itself. */
  resultJsonSchema?: JsonSchema;
  /** `@RpcStream({ row })`: one row of a stream method, likewise. */
  row?: ClassRef | StandardSchemaV1 | JsonSchema;
  /** `@RpcStream({ jsonSchema: { row } })`. */
  rowJsonSchema?: JsonSchema;
}

/** How the method takes its params (mirrors the param plan's argument sources). */
export type ParamsSource =
  /** The whole params value is bound to a DTO class (`@RpcParams() dto: X` or an undecorated first argument). */
  | {
      kind: 'dto';
      dtoClass: ClassRef;
      /** `allowPositional`: array items map onto the DTO's properties in declaration order. */
      positional: boolean;
      /** Unknown keys answer -32602 (the module's `params.rejectUnknown`, or the method's). */
      rejectUnknown: boolean;
    }
  /** `@RpcParam(name)` arguments, in declaration order (which is also their positional order). */
  | { kind: 'named'; params: readonly NamedParamSource[]; rejectUnknown: boolean }
  /** `@RpcMethod(name, { params })`: an explicit JSON Schema of the params object. */
  | { kind: 'schema'; schema: JsonSchemaObject }
  /**
   * A Standard Schema of the whole params (`@RpcMethod(name, { params })`, `@RpcParams({ schema })`),
   * described by its input side, or by `jsonSchema` when given.
   */
  | { kind: 'standard'; schema: StandardSchemaV1; jsonSchema?: JsonSchema }
  /** The handler receives the raw params (no DTO, no `@RpcParam`): any value is accepted. */
  | { kind: 'any' }
  /** The handler takes no params at all. */
  | { kind: 'none' };

export interface NamedParamSource {
  name: string;
  /** The parameter's `design:type` (Number, String, Boolean, Array, a DTO class, or anything else). */
  type: unknown;
  optional?: boolean;
  /** `@RpcParam(name, { default })`: present (even when undefined) means optional with this default. */
  default?: unknown;
  /** `@RpcParam(name, { schema })`: described by its input side (the declared type is then ignored). */
  schema?: StandardSchemaV1;
  /** `@RpcParam(name, { jsonSchema })`: describes `schema` instead of itself. */
  jsonSchema?: JsonSchema;
}
