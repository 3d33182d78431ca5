import { isStandardSchema, type StandardSchemaV1 } from '../decorators/standard-schema.js';
import { DtoBinder } from '../params/dto-binder.js';
import { DtoSchemaConverter } from './dto-schema-converter.js';
import { cloneJson, deepFreeze, isJsonSchemaObject, type ClassRef, type JsonSchema, type JsonSchemaObject } from './json-schema.js';
import type { MethodSchemaInput, NamedParamSource, ParamsSource } from './method-schema-input.js';
import type { MethodSchemas, ParamDescriptor, ParamsDescription } from './method-schemas.js';
import type { SchemaFailure, SchemaProblem, SchemaProblemSink } from './schema-problem.js';
import { adoptDefinitions, standardJsonSchema, type StandardSchemaSide } from './standard-json-schema.js';

const ANYTHING: JsonSchemaObject = Object.freeze({});

/**
 * Builds every method's schemas at startup, sharing one set of named components (DTO classes, and
 * the definitions Standard Schema libraries give). Never throws for what a class or schema says:
 * what a DTO cannot express is reported through `onProblem` (once per construct) and left
 * permissive; a Standard Schema that gives no JSON Schema is a `failures()` entry (the registry
 * refuses to start: such a method would be described as taking anything).
 *
 * Usage (the registry): one builder per module; `describe()` per method; then `components()`.
 */
export class MethodSchemaBuilder {
  private readonly converter: DtoSchemaConverter;
  private readonly problemList: SchemaProblem[] = [];
  private readonly failureList: SchemaFailure[] = [];
  private readonly report: SchemaProblemSink;

  constructor(options: { onProblem?: SchemaProblemSink } = {}) {
    this.report = (problem) => {
      this.problemList.push(problem);
      options.onProblem?.(problem);
    };
    this.converter = new DtoSchemaConverter(this.report);
  }

  describe(method: string, input: MethodSchemaInput): MethodSchemas {
    return deepFreeze({
      params: this.params(method, input.params),
      result: this.value(method, 'result', input.result, input.resultJsonSchema),
      row: input.row === undefined ? undefined : this.value(method, 'row', input.row, input.rowJsonSchema),
    });
  }

  /** Every named component built so far (a class reached from any described method). Frozen. */
  components(): Readonly<Record<string, JsonSchemaObject>> {
    return this.converter.components.all();
  }

  /** Every problem reported so far, in order. */
  problems(): readonly SchemaProblem[] {
    return [...this.problemList];
  }

  /** Every Standard Schema that could not be described, in order. */
  failures(): readonly SchemaFailure[] {
    return [...this.failureList];
  }

  private params(method: string, source: ParamsSource): ParamsDescription {
    switch (source.kind) {
      case 'dto':
        return this.dtoParams(source.dtoClass, source.positional, source.rejectUnknown);
      case 'named':
        return this.namedParams(method, source.params, source.rejectUnknown);
      case 'schema':
        return this.schemaParams(method, source.schema);
      case 'standard':
        return this.standardParams(method, source.schema, source.jsonSchema);
      case 'none':
        return { structure: 'by-name', described: false, descriptors: [], schema: { type: 'object', properties: {}, additionalProperties: false } };
      case 'any':
      default:
        return { structure: 'either', described: false, descriptors: [], schema: ANYTHING };
    }
  }

  /**
   * A params DTO is spread into one descriptor per property (OpenRPC lists params one by one);
   * the DTOs nested in it are components. Declaration order is the positional order the server
   * uses (DtoBinder's), so `either` descriptors line up with array items.
   */
  private dtoParams(dtoClass: ClassRef, positional: boolean, rejectUnknown: boolean): ParamsDescription {
    const components = this.converter.components;
    const name = components.nameOf(dtoClass, rejectUnknown ? 'closed' : 'open');
    const object = components.get(name)!;
    const properties = (isJsonSchemaObject(object.properties) ? object.properties : {}) as Record<string, JsonSchema>;
    const required = new Set(Array.isArray(object.required) ? (object.required as string[]) : []);
    const declared = new DtoBinder(dtoClass as never, false).declaredProperties().filter((p) => p in properties);
    const order = [...declared, ...Object.keys(properties).filter((p) => !declared.includes(p))];
    const descriptors = order.map((p) => ({ name: p, required: required.has(p), schema: properties[p] }));
    return { structure: positional ? 'either' : 'by-name', described: true, descriptors, schema: object };
  }

  private namedParams(method: string, params: readonly NamedParamSource[], rejectUnknown: boolean): ParamsDescription {
    const variant = rejectUnknown ? 'closed' : 'open';
    const descriptors: ParamDescriptor[] = params.map((p) => {
      let optional = p.optional === true || 'default' in p;
      let schema: JsonSchema;
      if (p.schema !== undefined) {
        schema = this.standard(method, `param "${p.name}"`, p.schema, 'input', p.jsonSchema, false);
        // A schema with a default (zod's `.default()`) fills in a missing value itself.
        optional ||= isJsonSchemaObject(schema) && 'default' in schema;
      } else schema = this.converter.classSchema(p.type, variant) ?? (p.type === Array ? { type: 'array' } : {});
      if ('default' in p && p.default !== undefined) {
        const value = jsonValue(p.default);
        if (value !== undefined) schema = { ...(schema as JsonSchemaObject), default: value };
      }
      return { name: p.name, required: !optional, schema };
    });
    return { structure: 'either', described: true, descriptors, schema: objectOf(descriptors, rejectUnknown) };
  }

  /** A Standard Schema of the whole params, described by its input side as a JSON Schema `params` would be. */
  private standardParams(method: string, given: StandardSchemaV1, jsonSchema: JsonSchema | undefined): ParamsDescription {
    const schema = this.standard(method, 'params', given, 'input', jsonSchema, true);
    if (schema === ANYTHING) return { structure: 'either', described: true, descriptors: [], schema: ANYTHING };
    return this.objectParams(isJsonSchemaObject(schema) ? schema : ANYTHING, true);
  }

  private schemaParams(method: string, given: JsonSchemaObject): ParamsDescription {
    const schema = this.userSchema(`${method} params`, given);
    return this.objectParams(schema, schema !== ANYTHING);
  }

  /** One descriptor per property when the params schema is an object's, else the schema as a whole. */
  private objectParams(schema: JsonSchema, described: boolean): ParamsDescription {
    if (!isJsonSchemaObject(schema) || !isJsonSchemaObject(schema.properties)) {
      return { structure: 'either', described, descriptors: [], schema: isJsonSchemaObject(schema) ? schema : ANYTHING };
    }
    const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
    const descriptors = Object.entries(schema.properties as Record<string, JsonSchema>).map(([name, s]) => ({ name, required: required.has(name), schema: s }));
    return { structure: 'by-name', described: true, descriptors, schema };
  }

  private value(method: string, what: 'result' | 'row', source: ClassRef | StandardSchemaV1 | JsonSchema | undefined, jsonSchema: JsonSchema | undefined): JsonSchema {
    if (source === undefined) return ANYTHING;
    // Before the class check: an ArkType schema is a function.
    if (isStandardSchema(source)) return this.standard(method, what, source, 'output', jsonSchema, false);
    // A result or row class states the shape handlers return (not checked by the server); it
    // shares the closed component a params DTO of the same class uses.
    if (typeof source === 'function') return this.converter.classSchema(source as ClassRef, 'closed') ?? ANYTHING;
    return this.userSchema(`${method} ${what}`, source as JsonSchema);
  }

  /**
   * A Standard Schema's JSON Schema (`given` instead, when the method gives one), its definitions
   * made shared components (`unwrapRoot`: see `adoptDefinitions`). One that gives none is a
   * failure, described meanwhile as anything.
   */
  private standard(method: string, what: string, schema: StandardSchemaV1, side: StandardSchemaSide, given: JsonSchema | undefined, unwrapRoot: boolean): JsonSchema {
    // A JSON Schema given to describe it is often another converter's output: its `$schema` and
    // `$defs` are taken in the same way.
    const converted = given !== undefined ? { schema: this.userSchema(`${method} ${what}`, given) } : standardJsonSchema(schema, side);
    if ('problem' in converted) {
      this.failureList.push({ method, what, message: converted.problem });
      return ANYTHING;
    }
    if (!isJsonSchemaObject(converted.schema) || converted.schema === ANYTHING) return converted.schema;
    return adoptDefinitions(converted.schema, { rootName: `${method} ${what}`, side, unwrapRoot, components: this.converter.components });
  }

  /** An app's JSON Schema literal, copied (so freezing ours leaves theirs alone). */
  private userSchema(where: string, given: JsonSchema): JsonSchema {
    if (typeof given === 'boolean') return given;
    try {
      const copy = cloneJson(given);
      if (isJsonSchemaObject(copy)) return copy;
    } catch {
      // fall through: a cycle or a BigInt
    }
    this.report({ where, message: 'is not a JSON value: left undescribed' });
    return ANYTHING;
  }
}

function objectOf(descriptors: readonly ParamDescriptor[], closed: boolean): JsonSchemaObject {
  const schema: JsonSchemaObject = {
    type: 'object',
    properties: Object.fromEntries(descriptors.map((d) => [d.name, d.schema])),
  };
  const required = descriptors.filter((d) => d.required).map((d) => d.name);
  if (required.length) schema.required = required;
  if (closed) schema.additionalProperties = false;
  return schema;
}

function jsonValue(value: unknown): unknown {
  try {
    return cloneJson(value);
  } catch {
    return undefined;
  }
}
