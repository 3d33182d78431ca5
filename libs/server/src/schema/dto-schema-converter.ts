import { defaultMetadataStorage } from 'class-transformer/cjs/storage.js';
import * as cv from 'class-validator';
import { getMetadataStorage, ValidationTypes } from 'class-validator';
import { targetConstructorToSchema } from 'class-validator-jsonschema';
import { defaultConverters, type ISchemaConverters } from 'class-validator-jsonschema/build/defaultConverters.js';
import type { ValidationMetadata } from 'class-validator/types/metadata/ValidationMetadata.js';
import { type ClassRef, type JsonSchemaObject, isJsonSchemaObject } from './json-schema.js';
import { SchemaComponents, type ClassSchemaVariant } from './schema-components.js';
import type { SchemaProblemSink } from './schema-problem.js';

type Converter = (meta: ValidationMetadata) => JsonSchemaObject | undefined;
/** What the metadata libraries call a class (`Function`). */
type MetadataTarget = Parameters<typeof targetConstructorToSchema>[0];
const asTarget = (value: unknown): MetadataTarget => value as MetadataTarget;

/** Design types that say nothing about a value: no schema beyond "anything". */
const OPAQUE_TYPES = new Set<unknown>([undefined, Object, Function, Promise, Symbol, BigInt, Array, Map, Set]);

/** Constraints `class-validator-jsonschema` maps to a schema that says less than the validator checks. */
const LOSSY_CONSTRAINTS: Readonly<Record<string, string>> = {
  [cv.IS_LOWERCASE]: 'lower case is not checked by the schema',
  [cv.IS_UPPERCASE]: 'upper case is not checked by the schema',
  [cv.IS_BYTE_LENGTH]: 'the byte length is not checked by the schema',
  [cv.IS_VARIABLE_WIDTH]: 'mixed character widths are not checked by the schema',
  [cv.MIN_DATE]: 'the earliest date is not checked by the schema',
  [cv.MAX_DATE]: 'the latest date is not checked by the schema',
};

/**
 * Turns class-validator decorated classes into JSON Schemas with `class-validator-jsonschema`,
 * with converters that fix what its defaults get wrong for this module:
 * - `@IsInt` gives `integer` whatever the decorator order (its defaults merge in metadata order,
 *   so `@Min` after `@IsInt` turned the type back into `number`);
 * - nested DTOs (`@ValidateNested` + `@Type`, or the design type) become `$ref`s to components
 *   named here (its defaults reference `target.name`, which two classes may share);
 * - `@IsOptional` admits `null` (class-validator skips null as it skips undefined);
 * - `@IsUrl` is `format: uri`, dates are `format: date-time`, enums list exactly the values
 *   class-validator accepts, and `@IsNotEmpty` no longer forces `type: string`;
 * - constraints with no JSON Schema equivalent are reported and left permissive.
 */
export class DtoSchemaConverter {
  readonly components: SchemaComponents;
  private readonly integerProperties = new WeakMap<ClassRef, Set<string>>();
  private readonly reported = new Set<string>();

  constructor(private readonly report: SchemaProblemSink) {
    this.components = new SchemaComponents((cls, variant) => this.convert(cls, variant));
  }

  /** The object schema of `cls`: its properties, `required`, and `additionalProperties: false` when closed. */
  private convert(cls: ClassRef, variant: ClassSchemaVariant): JsonSchemaObject {
    let converted: unknown;
    try {
      converted = targetConstructorToSchema(asTarget(cls), {
        additionalConverters: this.converters(cls, variant),
        classTransformerMetadataStorage: defaultMetadataStorage,
      });
    } catch (error) {
      this.problem(cls.name, `cannot be described (${(error as Error).message}); any object is accepted in its place`);
      return { type: 'object' };
    }
    const source = isJsonSchemaObject(converted) ? converted : {};
    const properties = isJsonSchemaObject(source.properties) ? source.properties : {};
    const metas = getMetadataStorage().getTargetValidationMetadatas(asTarget(cls), '', true, false);
    for (const meta of metas) {
      if (meta.type !== ValidationTypes.CONDITIONAL_VALIDATION) continue;
      const property = properties[meta.propertyName];
      if (meta.name === cv.IS_OPTIONAL) {
        if (isJsonSchemaObject(property)) properties[meta.propertyName] = admitNull(property);
      } else {
        this.problem(`${cls.name}.${meta.propertyName}`, 'is validated only under a condition (@ValidateIf): the schema treats it as optional');
      }
    }
    const schema: JsonSchemaObject = { ...source, type: 'object', properties };
    // class-validator lets `undefined` through unless a constraint runs on it: `@ValidateNested`
    // alone skips a missing value, so such a property is not required (the library says it is).
    const checksMissing = new Set(
      metas.filter((m) => m.type === ValidationTypes.CUSTOM_VALIDATION || m.type === ValidationTypes.IS_DEFINED).map((m) => m.propertyName),
    );
    if (Array.isArray(source.required)) {
      const required = (source.required as string[]).filter((p) => checksMissing.has(p));
      if (required.length) schema.required = required;
      else delete schema.required;
    }
    if (variant === 'closed') {
      schema.additionalProperties = false;
      if (metas.length === 0) this.problem(cls.name, 'has no class-validator decorators: with rejectUnknown every key is refused');
    }
    return schema;
  }

  private converters(cls: ClassRef, variant: ClassSchemaVariant): ISchemaConverters {
    const numeric = (meta: ValidationMetadata, extra: JsonSchemaObject): JsonSchemaObject => ({
      ...extra,
      type: this.isInteger(meta) ? 'integer' : 'number',
    });
    const dateTime = { type: 'string', format: 'date-time' };
    const converters: Record<string, Converter | JsonSchemaObject> = {
      [ValidationTypes.NESTED_VALIDATION]: (meta) => {
        const typeMeta = defaultMetadataStorage.findTypeMetadata(asTarget(meta.target), meta.propertyName);
        const type = typeMeta ? typeMeta.typeFunction() : Reflect.getMetadata('design:type', asTarget(meta.target).prototype, meta.propertyName);
        return this.classSchema(type, variant) ?? { type: 'object' };
      },
      [ValidationTypes.CUSTOM_VALIDATION]: (meta) => {
        // Reached for @Validate(Constraint), custom decorators, and built-in constraints the
        // library has no converter for: keep what the declared type says, report the rest.
        const name = meta.type === ValidationTypes.CUSTOM_VALIDATION ? (meta.constraintCls?.name ?? meta.name ?? 'custom') : meta.type;
        this.problem(`${cls.name}.${meta.propertyName}`, `constraint "${name}" has no JSON Schema equivalent: only its declared type is described`);
        const type = Reflect.getMetadata('design:type', asTarget(meta.target).prototype, meta.propertyName);
        return primitiveSchema(type) ?? {};
      },
      [cv.IS_INT]: (meta) => numeric(meta, {}),
      [cv.IS_NUMBER]: (meta) => numeric(meta, {}),
      [cv.MIN]: (meta) => numeric(meta, { minimum: meta.constraints[0] }),
      [cv.MAX]: (meta) => numeric(meta, { maximum: meta.constraints[0] }),
      [cv.IS_POSITIVE]: (meta) => numeric(meta, { exclusiveMinimum: 0 }),
      [cv.IS_NEGATIVE]: (meta) => numeric(meta, { exclusiveMaximum: 0 }),
      [cv.IS_DIVISIBLE_BY]: (meta) => numeric(meta, { multipleOf: meta.constraints[0] }),
      [cv.IS_ENUM]: (meta) => enumSchema(Object.values(meta.constraints[0] as object)),
      [cv.IS_IN]: (meta) => enumSchema(meta.constraints[0] as unknown[]),
      [cv.IS_NOT_EMPTY]: { not: { enum: ['', null] } },
      [cv.IS_EMPTY]: { enum: ['', null] },
      [cv.IS_URL]: { type: 'string', format: 'uri' },
      [cv.IS_ISO8601]: dateTime,
      [cv.IS_DATE_STRING]: dateTime,
      [cv.IS_DATE]: (meta) => {
        const typeMeta = defaultMetadataStorage.findTypeMetadata(asTarget(meta.target), meta.propertyName);
        if (typeMeta?.typeFunction() !== Date) {
          this.problem(`${cls.name}.${meta.propertyName}`, '@IsDate needs @Type(() => Date) to accept JSON (a string): without it no value passes');
        }
        return dateTime;
      },
    };
    for (const [name, message] of Object.entries(LOSSY_CONSTRAINTS)) {
      const base = defaultConverters[name];
      converters[name] = (meta) => {
        this.problem(`${cls.name}.${meta.propertyName}`, message);
        if (name === cv.MIN_DATE || name === cv.MAX_DATE) return dateTime;
        return ((typeof base === 'function' ? base(meta, {} as never) : base) ?? {}) as JsonSchemaObject;
      };
    }
    return converters as ISchemaConverters;
  }

  /** A `$ref` for a DTO class, a primitive's schema, or undefined for types that say nothing. */
  classSchema(type: unknown, variant: ClassSchemaVariant): JsonSchemaObject | undefined {
    const primitive = primitiveSchema(type);
    if (primitive) return primitive;
    if (typeof type !== 'function' || OPAQUE_TYPES.has(type) || type === Date) return undefined;
    return this.components.refTo(type as ClassRef, variant);
  }

  private isInteger(meta: ValidationMetadata): boolean {
    const target = meta.target as ClassRef;
    let integers = this.integerProperties.get(target);
    if (!integers) {
      integers = new Set();
      for (const m of getMetadataStorage().getTargetValidationMetadatas(asTarget(target), '', true, false)) {
        if (m.name === cv.IS_INT) integers.add(`${m.propertyName}|${m.each === true}`);
      }
      this.integerProperties.set(target, integers);
    }
    return integers.has(`${meta.propertyName}|${meta.each === true}`);
  }

  /** Reports each problem once, however many methods share the class. */
  private problem(where: string, message: string): void {
    const key = `${where}\u0000${message}`;
    if (this.reported.has(key)) return;
    this.reported.add(key);
    this.report({ where, message });
  }
}

export function primitiveSchema(type: unknown): JsonSchemaObject | undefined {
  if (type === String) return { type: 'string' };
  if (type === Number) return { type: 'number' };
  if (type === Boolean) return { type: 'boolean' };
  return undefined;
}

/** Exactly the listed values; `type` only when they share one (it helps forms and generated types). */
function enumSchema(values: readonly unknown[]): JsonSchemaObject {
  const unique = [...new Set(values)];
  const types = new Set(unique.map((v) => (v === null ? 'null' : Number.isInteger(v) ? 'integer' : typeof v)));
  const schema: JsonSchemaObject = { enum: unique };
  if (types.size === 1) {
    const [type] = types;
    if (type === 'string' || type === 'integer' || type === 'boolean') schema.type = type;
    else if (type === 'number') schema.type = 'number';
  }
  return schema;
}

/** `@IsOptional` lets null through as well as a missing key. */
function admitNull(schema: JsonSchemaObject): JsonSchemaObject {
  if (typeof schema.type === 'string' && Object.keys(schema).every((k) => k !== 'enum' && k !== '$ref' && k !== 'not')) {
    return { ...schema, type: [schema.type, 'null'] };
  }
  return { anyOf: [schema, { type: 'null' }] };
}
