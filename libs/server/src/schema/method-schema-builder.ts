import { DtoBinder } from '../params/dto-binder.js';
import { DtoSchemaConverter } from './dto-schema-converter.js';
import { cloneJson, deepFreeze, isJsonSchemaObject, type ClassRef, type JsonSchema, type JsonSchemaObject } from './json-schema.js';
import type { MethodSchemaInput, NamedParamSource, ParamsSource } from './method-schema-input.js';
import type { MethodSchemas, ParamDescriptor, ParamsDescription } from './method-schemas.js';
import type { SchemaProblem, SchemaProblemSink } from './schema-problem.js';

const ANYTHING: JsonSchemaObject = Object.freeze({});

/**
 * Builds every method's schemas at startup, sharing one set of named components (DTO classes).
 * Never throws for what a class or schema says: what cannot be expressed is reported through
 * `onProblem` (once per construct) and left permissive.
 *
 * Usage (the registry): one builder per module; `describe()` per method; then `components()`.
 */
export class MethodSchemaBuilder {
  private readonly converter: DtoSchemaConverter;
  private readonly problemList: SchemaProblem[] = [];
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
      result: this.value(`${method} result`, input.result),
      row: input.row === undefined ? undefined : this.value(`${method} row`, input.row),
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

  private params(method: string, source: ParamsSource): ParamsDescription {
    switch (source.kind) {
      case 'dto':
        return this.dtoParams(source.dtoClass, source.positional, source.rejectUnknown);
      case 'named':
        return this.namedParams(source.params, source.rejectUnknown);
      case 'schema':
        return this.schemaParams(method, source.schema);
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

  private namedParams(params: readonly NamedParamSource[], rejectUnknown: boolean): ParamsDescription {
    const variant = rejectUnknown ? 'closed' : 'open';
    const descriptors: ParamDescriptor[] = params.map((p) => {
      const optional = p.optional === true || 'default' in p;
      let schema: JsonSchema = this.converter.classSchema(p.type, variant) ?? (p.type === Array ? { type: 'array' } : {});
      if ('default' in p && p.default !== undefined) {
        const value = jsonValue(p.default);
        if (value !== undefined) schema = { ...(schema as JsonSchemaObject), default: value };
      }
      return { name: p.name, required: !optional, schema };
    });
    return { structure: 'either', described: true, descriptors, schema: objectOf(descriptors, rejectUnknown) };
  }

  private schemaParams(method: string, given: JsonSchemaObject): ParamsDescription {
    const schema = this.userSchema(`${method} params`, given);
    if (!isJsonSchemaObject(schema) || !isJsonSchemaObject(schema.properties)) {
      return { structure: 'either', described: schema !== ANYTHING, descriptors: [], schema: isJsonSchemaObject(schema) ? schema : ANYTHING };
    }
    const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
    const descriptors = Object.entries(schema.properties as Record<string, JsonSchema>).map(([name, s]) => ({ name, required: required.has(name), schema: s }));
    return { structure: 'by-name', described: true, descriptors, schema };
  }

  private value(where: string, source: ClassRef | JsonSchema | undefined): JsonSchema {
    if (source === undefined) return ANYTHING;
    // A result or row class states the shape handlers return (not checked by the server); it
    // shares the closed component a params DTO of the same class uses.
    if (typeof source === 'function') return this.converter.classSchema(source, 'closed') ?? ANYTHING;
    return this.userSchema(where, source);
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
