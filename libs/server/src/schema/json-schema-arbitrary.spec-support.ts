/**
 * fast-check arbitraries from the schemas this folder emits (test support): values a schema
 * accepts, and values breaking exactly one of its constraints. Covers the keywords the converter
 * produces (type, format, bounds, lengths, pattern, enum, required, additionalProperties, items,
 * anyOf, $ref), nothing more: an unknown keyword fails loudly instead of being ignored.
 */
import fc from 'fast-check';
import { componentNameOf, isJsonSchemaObject, type JsonSchema, type JsonSchemaObject } from './json-schema.js';

type Components = Readonly<Record<string, JsonSchemaObject>>;
const KNOWN = new Set([
  'type', 'format', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'minLength', 'maxLength', 'pattern',
  'enum', 'properties', 'required', 'additionalProperties', 'items', 'anyOf', '$ref', 'not', 'minItems', 'maxItems', 'default',
]);

const FORMATS: Record<string, fc.Arbitrary<string>> = {
  email: fc.tuple(fc.stringMatching(/^[a-z][a-z0-9]{0,7}$/), fc.stringMatching(/^[a-z]{2,8}$/), fc.constantFrom('com', 'org', 'io'))
    .map(([user, host, tld]) => `${user}@${host}.${tld}`),
  uri: fc.tuple(fc.constantFrom('http', 'https'), fc.stringMatching(/^[a-z]{2,8}$/), fc.stringMatching(/^[a-z0-9]{0,6}$/))
    .map(([scheme, host, path]) => `${scheme}://${host}.example/${path}`),
  uuid: fc.uuid(),
  'date-time': fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString()),
};
const BROKEN_FORMATS: Record<string, string[]> = {
  email: ['not-an-email', 'a@', '@b.com'],
  uri: ['no scheme here', 'http//missing-colon'],
  uuid: ['123', 'zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz'],
  'date-time': ['yesterday', '2020-13-45T99:99:99Z'],
};

function resolve(schema: JsonSchema, components: Components): JsonSchema {
  if (isJsonSchemaObject(schema) && typeof schema.$ref === 'string') {
    const name = componentNameOf(schema.$ref);
    if (name === undefined || !components[name]) throw new Error(`unresolvable ${schema.$ref}`);
    return components[name];
  }
  return schema;
}

function typesOf(schema: JsonSchemaObject): string[] | undefined {
  return schema.type === undefined ? undefined : Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];
}

/** Values `schema` accepts. `depth` bounds recursion through self-referencing components. */
export function validValue(schema: JsonSchema, components: Components, depth = 0): fc.Arbitrary<unknown> {
  schema = resolve(schema, components);
  if (schema === true) return fc.jsonValue({ maxDepth: 2 });
  if (schema === false) throw new Error('false schema has no valid value');
  for (const key of Object.keys(schema)) if (!KNOWN.has(key)) throw new Error(`arbitrary: unsupported keyword ${key}`);
  if (Array.isArray(schema.anyOf)) return fc.oneof(...(schema.anyOf as JsonSchema[]).map((s) => validValue(s, components, depth)));
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  const types = typesOf(schema);
  if (types === undefined) {
    let any: fc.Arbitrary<unknown> = fc.jsonValue({ maxDepth: 2 });
    if (isJsonSchemaObject(schema.not) && Array.isArray(schema.not.enum)) {
      const banned = schema.not.enum as unknown[];
      any = any.filter((v) => !banned.includes(v as never));
    }
    return any;
  }
  const typed = fc.oneof(...types.map((type) => validOfType(type, schema as JsonSchemaObject, components, depth)));
  return isJsonSchemaObject(schema.not) ? typed.filter((v) => !(schema.not as JsonSchemaObject & { enum: unknown[] }).enum.includes(v)) : typed;
}

function validOfType(type: string, schema: JsonSchemaObject, components: Components, depth: number): fc.Arbitrary<unknown> {
  switch (type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
    case 'number': {
      const min = (schema.minimum as number | undefined) ?? (schema.exclusiveMinimum !== undefined ? (schema.exclusiveMinimum as number) + (type === 'integer' ? 1 : 1e-6) : -1e6);
      const max = (schema.maximum as number | undefined) ?? (schema.exclusiveMaximum !== undefined ? (schema.exclusiveMaximum as number) - (type === 'integer' ? 1 : 1e-6) : 1e6);
      return type === 'integer'
        ? fc.integer({ min: Math.ceil(min), max: Math.floor(max) })
        : fc.double({ min, max, noNaN: true, noDefaultInfinity: true }).map((n) => (Object.is(n, -0) ? 0 : n));
    }
    case 'string': {
      if (typeof schema.format === 'string') {
        const arb = FORMATS[schema.format];
        if (!arb) throw new Error(`arbitrary: unsupported format ${schema.format}`);
        return arb;
      }
      if (typeof schema.pattern === 'string') {
        const re = new RegExp(schema.pattern);
        return fc.stringMatching(re).filter((s) => lengthOk(s, schema));
      }
      return fc.string({ minLength: (schema.minLength as number) ?? 0, maxLength: (schema.maxLength as number) ?? 20 });
    }
    case 'array': {
      const items = (schema.items as JsonSchema | undefined) ?? true;
      // Deep in a self-referencing DTO, arrays stay empty so generation terminates.
      if (depth > 3 && !schema.minItems) return fc.constant([]);
      return fc.array(validValue(items, components, depth + 1), { minLength: (schema.minItems as number) ?? 0, maxLength: Math.min((schema.maxItems as number) ?? 3, 3) });
    }
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
      const required = new Set((schema.required ?? []) as string[]);
      const record: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [key, s] of Object.entries(properties)) {
        // Deep in a self-referencing DTO, optional keys are left out so generation terminates.
        if (depth <= 4 || required.has(key)) record[key] = validValue(s, components, depth + 1);
      }
      const requiredKeys = Object.keys(record).filter((k) => required.has(k));
      return fc.record(record, { requiredKeys });
    }
    default:
      throw new Error(`arbitrary: unsupported type ${type}`);
  }
}

function lengthOk(s: string, schema: JsonSchemaObject): boolean {
  return s.length >= ((schema.minLength as number) ?? 0) && s.length <= ((schema.maxLength as number) ?? Infinity);
}

/** Values `schema` rejects, each breaking one of its constraints (empty when it admits anything). */
function brokenValues(schema: JsonSchema, components: Components): unknown[] {
  schema = resolve(schema, components);
  if (typeof schema === 'boolean') return [];
  if (Array.isArray(schema.anyOf)) {
    // The converter's only union is "X or null" (@IsOptional): break X, never with null.
    const alternatives = (schema.anyOf as JsonSchema[]).filter((s) => !(isJsonSchemaObject(s) && s.type === 'null'));
    return alternatives.flatMap((s) => brokenValues(s, components)).filter((v) => v !== null);
  }
  const out: unknown[] = [];
  if (Array.isArray(schema.enum)) out.push('__not_in_enum__', 987654);
  if (isJsonSchemaObject(schema.not) && Array.isArray(schema.not.enum)) out.push(...(schema.not.enum as unknown[]));
  const types = typesOf(schema);
  if (types) {
    const numeric = types.includes('number') || types.includes('integer');
    const wrongType = [!numeric && 12345, !types.includes('string') && 'text', !types.includes('boolean') && true].find((v) => v !== false);
    if (wrongType !== undefined) out.push(wrongType);
    if (!types.includes('null')) out.push(null);
    if (types.includes('integer') && !types.includes('number')) out.push(1.5);
  }
  if (typeof schema.minimum === 'number') out.push(schema.minimum - 1);
  if (typeof schema.maximum === 'number') out.push(schema.maximum + 1);
  if (typeof schema.minLength === 'number' && schema.minLength > 0) out.push('x'.repeat(schema.minLength - 1));
  if (typeof schema.maxLength === 'number') out.push('x'.repeat(schema.maxLength + 1));
  if (typeof schema.pattern === 'string') out.push('!not matching!');
  if (typeof schema.format === 'string') out.push(...(BROKEN_FORMATS[schema.format] ?? []));
  return out;
}

/**
 * A valid object with exactly one constraint broken somewhere (a property's value, a missing
 * required key, an unknown key, or the same inside a nested DTO).
 */
export function invalidObject(schema: JsonSchema, components: Components): fc.Arbitrary<{ value: Record<string, unknown>; broke: string }> {
  const object = resolve(schema, components) as JsonSchemaObject;
  const properties = (object.properties ?? {}) as Record<string, JsonSchema>;
  const required = (object.required ?? []) as string[];
  const breaks: Array<fc.Arbitrary<{ value: Record<string, unknown>; broke: string }>> = [];
  const base = validValue(object, components) as fc.Arbitrary<Record<string, unknown>>;
  for (const key of required) breaks.push(base.map((v) => ({ value: omit(v, key), broke: `missing ${key}` })));
  if (object.additionalProperties === false) breaks.push(base.map((v) => ({ value: { ...v, zz_unknown: 1 }, broke: 'unknown key' })));
  for (const [key, s] of Object.entries(properties)) {
    const bad = brokenValues(s, components);
    if (bad.length) breaks.push(fc.tuple(base, fc.constantFrom(...bad)).map(([v, b]) => ({ value: { ...v, [key]: b }, broke: `${key} = ${JSON.stringify(b)}` })));
    const inner = resolve(s, components);
    if (isJsonSchemaObject(inner) && inner.type === 'object' && inner.properties && Object.keys(inner.properties).length) {
      breaks.push(fc.tuple(base, invalidObject(inner, components)).map(([v, n]) => ({ value: { ...v, [key]: n.value }, broke: `${key}.{${n.broke}}` })));
    }
  }
  if (breaks.length === 0) throw new Error('nothing to break');
  return fc.oneof(...breaks);
}

function omit(value: Record<string, unknown>, key: string): Record<string, unknown> {
  const { [key]: _dropped, ...rest } = value;
  return rest;
}
