import type { JsonSchema, JsonSchemaObject } from './json-schema.js';

/** One parameter, as an OpenRPC content descriptor needs it. */
export interface ParamDescriptor {
  readonly name: string;
  readonly required: boolean;
  readonly schema: JsonSchema;
}

/** How a method's params are described. */
export interface ParamsDescription {
  /**
   * `by-name`: params must be an object. `either`: an array is accepted too, its items taking the
   * descriptors in order (`@RpcParam` methods, `allowPositional` DTOs, and undescribed params).
   */
  readonly structure: 'by-name' | 'either';
  /** False when the method takes no params or its params are not described: no -32602 is implied. */
  readonly described: boolean;
  /** The params object's properties in declaration (= positional) order. */
  readonly descriptors: readonly ParamDescriptor[];
  /** The whole params object: `type: object`, the descriptors as properties, `required`, and
   * `additionalProperties: false` when unknown keys are rejected. `{}` when not described. */
  readonly schema: JsonSchemaObject;
}

/** Everything described about one method. Frozen. `$ref`s point into the builder's components. */
export interface MethodSchemas {
  readonly params: ParamsDescription;
  /** The result of a call (`{}`: not described). For a durable stream, still the row. */
  readonly result: JsonSchema;
  /** One row, for stream methods; undefined otherwise. */
  readonly row: JsonSchema | undefined;
}
